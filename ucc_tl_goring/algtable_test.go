//go:build ucc

package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
)

var updateAlgs = flag.Bool("update-algs", false, "rewrite cshim/tl_goring_algs.h from sched's registry")

// algTableColls are the collectives whose algorithms UCC sees, in the
// header's order, with the X-macro each gets. UCC's alltoall runs
// alltoallv's algorithms (cshim/tl_goring_algs.c maps both to one table).
var algTableColls = []struct {
	macro string
	c     coll.Collective
}{
	{"ALLGATHER", coll.Allgather}, {"ALLREDUCE", coll.Allreduce}, {"REDUCE_SCATTER", coll.ReduceScatter},
	{"BCAST", coll.Bcast}, {"ALLTOALLV", coll.Alltoallv},
}

const algTablePath = "../cshim/tl_goring_algs.h"

// renderAlgTable writes the header: one X-macro per collective listing
// X(coll, id, name, "description") for every registered algorithm, ids in
// the registry's (name) order.
func renderAlgTable(t *testing.T) string {
	var b strings.Builder
	b.WriteString(`/*
 * tl_goring_algs.h: goring's algorithms per collective as UCC lists them
 * (ucc_info -A) and selects them (UCC_TL_GORING_TUNE=allreduce:0-inf:@lane).
 * Generated from sched's registry and checked against it by
 *     go test -tags ucc ./ucc_tl_goring -run AlgTable [-update-algs]
 * so do not edit it by hand. X(coll, id, name, description); ids follow the
 * names' order in this build, so name algorithms, not ids, in a TUNE string.
 */
#ifndef TL_GORING_ALGS_H_
#define TL_GORING_ALGS_H_
`)
	for _, tc := range algTableColls {
		algs := sched.Algorithms(tc.c)
		require.NotEmpty(t, algs, tc.c)
		fmt.Fprintf(&b, "\n#define GORING_ALGS_%s(X)", tc.macro)
		for i, a := range algs {
			for _, r := range a.Desc {
				require.Truef(t, r >= 0x20 && r < 0x7f && r != '"' && r != '\\', "%s/%s: description %q needs C escaping", tc.c, a.Name, a.Desc)
			}
			fmt.Fprintf(&b, " \\\n    X(%s, %d, %s, \"%s\")", tc.c, i, a.Name, a.Desc)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n#endif /* TL_GORING_ALGS_H_ */\n")
	return b.String()
}

// The table UCC sees is sched's registry: an algorithm added, renamed or
// removed in Go and not in the header fails here.
func TestAlgTableMatchesSched(t *testing.T) {
	want := renderAlgTable(t)
	if *updateAlgs {
		require.NoError(t, os.WriteFile(algTablePath, []byte(want), 0o644))
	}
	got, err := os.ReadFile(algTablePath)
	require.NoError(t, err)
	require.Equal(t, want, string(got), "cshim/tl_goring_algs.h is stale: rerun with -update-algs")
}
