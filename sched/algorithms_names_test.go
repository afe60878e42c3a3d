package sched

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/goring-hpc/goring/coll"
)

// The names follow the registry, sorted as Algorithms lists them.
func TestAlgorithmNames(t *testing.T) {
	names := AlgorithmNames(coll.Allgather)
	algs := Algorithms(coll.Allgather)
	assert.Len(t, names, len(algs))
	for i, a := range algs {
		assert.Equal(t, a.Name, names[i])
	}
	assert.Contains(t, names, "ring")
}
