package ucx

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"unsafe"
)

// LibName is the soname that Load opens by default. The dynamic loader's
// usual search applies, so LD_LIBRARY_PATH can point at another UCX build
// (for example a CUDA-enabled one) without rebuilding goring.
const LibName = "libucp.so.0"

// LibEnv names the environment variable that, when set and non-empty,
// replaces LibName: a soname or a path such as the libucp.so.0 of a
// CUDA-enabled UCX (the libucx-cu13 wheel's, for example).
const LibEnv = "GORING_LIBUCP"

// WheelDir is where `make deps` puts the Python registry's CUDA-enabled
// UCX (libucx-cu13), relative to the repository root; a binary in the
// repository's bin/ (or a copy of bin/ and .deps/ carried elsewhere) finds
// it beside itself.
const WheelDir = ".deps/ucx-cu13"

// wheelLib is the wheel's libucp relative to WheelDir.
const wheelLib = "libucx/lib/libucp.so.0"

// libPath is the library Load opens, and why: a libucp already in the
// process (Open MPI, UCC: one UCX per process), else $GORING_LIBUCP, else
// the CUDA-enabled wheel beside the executable (../.deps/ucx-cu13), else
// the system's LibName.
func libPath() (path, why string) {
	if loadedAlready(LibName) {
		return LibName, "already loaded in this process"
	}
	if p := os.Getenv(LibEnv); p != "" {
		return p, "$" + LibEnv
	}
	if exe, err := os.Executable(); err == nil {
		w := filepath.Join(filepath.Dir(exe), "..", WheelDir, wheelLib)
		if _, err := os.Stat(w); err == nil {
			return w, "the CUDA-enabled UCX beside the executable"
		}
	}
	return LibName, "the system's"
}

func loadedAlready(name string) bool {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	return C.gr_loaded(cname) != 0
}

var libWhy string

// Library says which libucp Load opened and why ("" before Load).
func Library() string { return libWhy }

var (
	loadOnce sync.Once
	loadErr  error
	loaded   atomic.Bool // read by Status.Error from any goroutine
)

// Load opens libucp (libPath: $GORING_LIBUCP or LibName) once per process and resolves every function the
// package uses. It is safe to call from several goroutines; later calls
// return the first result. Init calls it, so most callers never need to.
// The error is one line, for example
//
//	libucp.so.0 not found (install libucx0: apt-get install libucx0): libucp.so.0: cannot open shared object file: No such file or directory
func Load() error {
	loadOnce.Do(func() {
		path, why := libPath()
		libWhy = path + " (" + why + ")"
		loadErr = loadLib(path)
		loaded.Store(loadErr == nil)
	})
	return loadErr
}

// loadLib is Load without the once, so tests can check the message for a
// library that is absent.
func loadLib(name string) error {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var buf [512]C.char
	if C.gr_load(cname, &buf[0], C.size_t(len(buf))) != 0 {
		return errors.New(C.GoString(&buf[0]))
	}
	return nil
}

// Version reports the version of the loaded libucp (major, minor, release).
func Version() (major, minor, release int, err error) {
	if err := Load(); err != nil {
		return 0, 0, 0, err
	}
	var a, b, c C.uint
	C.gr_version(&a, &b, &c)
	return int(a), int(b), int(c), nil
}

// VersionString is Version as "1.13.1", or the load error's text.
func VersionString() string {
	a, b, c, err := Version()
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%d.%d.%d", a, b, c)
}
