package team

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// UCC_TL_GORING_CLAIMS: a file that does not load or is no valid claims
// document refuses the context with the reason, as an invalid parameter;
// a valid one is the context's, for its teams' scores.
func TestContextClaimsFile(t *testing.T) {
	o, err := parseOptions("claims=/x/claims.json;ipc=y")
	require.NoError(t, err)
	assert.Equal(t, "/x/claims.json", o.claims)

	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"format":"goring.claims/v1","gpu":"NVIDIA H200","ranks":1,"rows":{}}`), 0o644))
	for _, c := range []struct{ file, want string }{
		{"/nonexistent/claims.json", "claims /nonexistent/claims.json: open"},
		{bad, "claims " + bad + ": ranks 1"},
	} {
		_, err := NewContext("claims="+c.file, testTable{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.want)
		assert.Equal(t, StatusInvalid, StatusOf(err))
	}

	good := filepath.Join(dir, "good.json")
	require.NoError(t, os.WriteFile(good, []byte(`{"format":"goring.claims/v1","gpu":"NVIDIA H200","ranks":4,"shared":true,
		"rows":{"allgather":[{"bytes":16384,"goring_us":40,"peers_us":{"cuda":1100}}]}}`), 0o644))
	ctx, err := NewContext("claims="+good, testTable{})
	require.NoError(t, err)
	defer func() { assert.NoError(t, ctx.Close()) }()
	require.NotNil(t, ctx.claims)
	assert.Equal(t, 4, ctx.claims.Ranks)
	assert.True(t, ctx.claims.Shared)
}
