package cexec

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/ucx"
)

// TestNoEndpointNamesNoElem: a send to a peer the team has no endpoint
// for fails the call with UCS_ERR_NO_ELEM, not with a code that reads as
// an I/O error (a peer failure to whoever classifies it).
func TestNoEndpointNamesNoElem(t *testing.T) {
	j := newJob(t, 2)
	tm, err := NewTeam(j.workers[0], 0, 2, func(p int) *ucx.Endpoint {
		if p == 0 {
			return j.eps[0][0]
		}
		return nil
	})
	require.NoError(t, err)
	defer tm.Free()
	var prog sched.RankProgram
	prog.Send(1, 0, sched.At(sched.BufSrc, 0), 8, sched.Path{})
	prog.Sizes = sched.Sizes{Src: 8, Dst: 8}
	key := Key{Coll: 40, Dtype: uint8(coll.Uint8), Count: 8, Alg: "noep"}
	p, err := Lower(&prog, "noep", coll.Uint8, coll.Sum, Plain, false)
	require.NoError(t, err)
	_, err = tm.Put(key, p)
	require.NoError(t, err)
	p.Release()
	c, err := tm.NewCall(key)
	require.NoError(t, err)
	defer c.Finalize()
	err = c.Post(ptr(cBytes(t, make([]byte, 8))), ptr(cBytes(t, make([]byte, 8))))
	require.Error(t, err)
	want, _, _ := strings.Cut(ucx.ErrNoElem.Error(), " (UCS_")
	require.Contains(t, err.Error(), want)
}
