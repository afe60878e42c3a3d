package team

import (
	"fmt"
	"os"

	"github.com/goring-hpc/goring/tune"
)

// UCC_TL_GORING_CLAIMS=FILE (option claims=FILE): the machine's own
// measured table of goring against UCC's GPU layers (tune.ClaimsFile,
// written by `goring tune ucc`). On the teams it fits (its GPU's name, team
// size, shared or a GPU each) goring claims by it instead of by the tables
// shipped for H100 and H200 nodes (scores.go, tune.NodeClaims). A file
// that does not load or is not a valid document fails the context: a
// typo must not leave the user on the shipped defaults unawares.

// loadClaims reads the claims option's file; "" is none.
func loadClaims(file string) (*tune.ClaimsFile, error) {
	if file == "" {
		return nil, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("claims %s: %w", file, err)
	}
	f, err := tune.ParseClaims(data)
	if err != nil {
		return nil, fmt.Errorf("claims %s: %w", file, err)
	}
	return f, nil
}
