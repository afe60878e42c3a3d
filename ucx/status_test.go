package ucx

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStatusErrorsIs(t *testing.T) {
	sentinels := []Status{ErrNoMessage, ErrCanceled, ErrUnreachable, ErrTimedOut,
		ErrConnectionReset, ErrMessageTruncated, ErrBusy, ErrEndpointTimeout}
	for i, s := range sentinels {
		var err error = Status(int(s)) // as built from a C status
		wrapped := fmt.Errorf("step 4 of rank 2: %w", err)
		assert.True(t, errors.Is(wrapped, s), "case %d %s", i, s.Name())
		for j, o := range sentinels {
			if i != j {
				assert.False(t, errors.Is(wrapped, o), "case %d is not %s", i, o.Name())
			}
		}
	}
}

func TestStatusNames(t *testing.T) {
	cases := []struct {
		s    Status
		name string
	}{
		{OK, "UCS_OK"},
		{ErrCanceled, "UCS_ERR_CANCELED"},
		{ErrMessageTruncated, "UCS_ERR_MESSAGE_TRUNCATED"},
		{Status(-42), "UCS_ERR_FIRST_LINK_FAILURE-2"},
		{Status(-61), "UCS_ERR_FIRST_ENDPOINT_FAILURE-1"},
		{Status(-99), "ucs_status_t(-99)"},
	}
	for i, c := range cases {
		assert.Equal(t, c.name, c.s.Name(), "case %d", i)
	}
}

func TestIsPeerFailure(t *testing.T) {
	cases := []struct {
		err  error
		want bool
	}{
		{ErrConnectionReset, true},
		{fmt.Errorf("x: %w", ErrEndpointTimeout), true},
		{ErrUnreachable, true},
		{Status(-45), true},
		{Status(-70), true},
		{ErrCanceled, false},
		{ErrMessageTruncated, false},
		{errors.New("other"), false},
		{nil, false},
	}
	for i, c := range cases {
		assert.Equal(t, c.want, IsPeerFailure(c.err), "case %d %v", i, c.err)
	}
}

// With libucp loaded, Error uses UCX's own text for the code.
func TestStatusStringFromUCX(t *testing.T) {
	skipWithoutUCX(t)
	cases := []struct {
		s    Status
		word string
	}{
		{ErrMessageTruncated, "truncated"},
		{ErrCanceled, "cancel"},
		{ErrTimedOut, "timed out"},
		{ErrNoMessage, "message"},
		{ErrUnreachable, "unreachable"},
	}
	seen := map[string]bool{}
	for i, c := range cases {
		msg := c.s.Error()
		assert.Contains(t, strings.ToLower(msg), c.word, "case %d", i)
		assert.Contains(t, msg, c.s.Name(), "case %d", i)
		assert.NotEqual(t, c.s.Name(), msg, "case %d: UCX text missing", i)
		require.False(t, seen[msg], "case %d: text repeats", i)
		seen[msg] = true
	}
}

func TestLoadMissingLibrary(t *testing.T) {
	err := loadLib("libucp-goring-absent.so.0")
	require.Error(t, err)
	msg := err.Error()
	assert.True(t, strings.HasPrefix(msg, "libucp-goring-absent.so.0 not found (install libucx0: apt-get install libucx0): "), msg)
	assert.NotContains(t, msg, "\n")
}

func TestLibPathFromEnvironment(t *testing.T) {
	cases := []struct{ env, want string }{
		{"", LibName},
		{"/opt/ucx-cuda/lib/libucp.so.0", "/opt/ucx-cuda/lib/libucp.so.0"},
		{"libucp.so.1", "libucp.so.1"},
	}
	for i, c := range cases {
		t.Setenv(LibEnv, c.env)
		got, _ := libPath()
		if loadedAlready(LibName) {
			// Another test of this binary loaded UCX: that copy wins.
			assert.Equal(t, LibName, got, "case %d", i)
			continue
		}
		assert.Equal(t, c.want, got, "case %d", i)
	}
}
