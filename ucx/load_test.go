package ucx

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// stubLib builds a library that has the first few libucp functions and
// lacks the rest, as an older or foreign libucp would.
func stubLib(t *testing.T) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skipf("no C compiler for the stub library: %v", err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "stub.c")
	require.NoError(t, os.WriteFile(src, []byte(`
int  ucp_config_read(void) { return -4; }
void ucp_config_release(void) {}
int  ucp_config_modify(void) { return -4; }
void ucp_get_version(unsigned *a, unsigned *b, unsigned *c) { *a = *b = *c = 99; }
`), 0o644))
	lib := filepath.Join(dir, "libucp-stub.so")
	out, err := exec.Command(cc, "-shared", "-fPIC", "-o", lib, src).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return lib
}

// TestLoadMissingSymbolLeavesNothingBehind: a library that lacks a
// function is refused without staying in the process (it was opened
// RTLD_GLOBAL, so its symbols would shadow later lookups) and without
// replacing any function of the libucp already in use.
func TestLoadMissingSymbolLeavesNothingBehind(t *testing.T) {
	lib := stubLib(t)
	realErr := Load()
	var major, minor, release int
	if realErr == nil {
		major, minor, release, _ = Version()
	}
	err := loadLib(lib)
	require.ErrorContains(t, err, "missing symbol ucp_init_version")
	require.False(t, loadedAlready(lib), "the refused library is still loaded")
	if realErr != nil {
		return
	}
	a, b, c, err := Version()
	require.NoError(t, err)
	require.Equal(t, []int{major, minor, release}, []int{a, b, c}, "the loaded libucp's functions were replaced")
}
