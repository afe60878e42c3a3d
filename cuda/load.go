package cuda

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
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// LibName is the soname that Load opens by default: the driver library that
// the NVIDIA driver installs (no toolkit needed).
const LibName = "libcuda.so.1"

// LibEnv names the environment variable that, when set and non-empty,
// replaces LibName (a soname or a path).
const LibEnv = "GORING_LIBCUDA"

// libPath is the library Load opens: $GORING_LIBCUDA, else LibName.
func libPath() string {
	if p := os.Getenv(LibEnv); p != "" {
		return p
	}
	return LibName
}

// NoDriverError says that this machine has no usable CUDA driver: the
// library cannot be opened, or it opens and reports no device. Tests skip
// on it; every other failure of Load means a driver that is present and
// broken, and is returned as is.
type NoDriverError struct {
	Lib    string // what dlopen was given
	Reason string // dlerror() text or the driver's answer
}

func (e *NoDriverError) Error() string {
	reason := e.Reason
	if !strings.HasPrefix(reason, e.Lib) { // dlerror() already names the library
		reason = e.Lib + ": " + reason
	}
	return fmt.Sprintf("no CUDA driver: %s (GPU paths need the NVIDIA driver; set %s to its libcuda.so.1)",
		reason, LibEnv)
}

// IsNoDriver reports whether err is (or wraps) a *NoDriverError.
func IsNoDriver(err error) bool {
	var nd *NoDriverError
	return errors.As(err, &nd)
}

var (
	loadOnce sync.Once
	loadErr  error
	loaded   atomic.Bool // read by Result.Error from any goroutine
)

// Load opens the driver library (libPath) once per process, resolves every
// entry point the package uses and calls cuInit(0). It is safe from several
// goroutines; later calls return the first result. Every constructor in the
// package calls it, so callers need not.
func Load() error {
	loadOnce.Do(func() { loadErr = loadLib(libPath()) })
	return loadErr
}

// loadLib is Load without the once, so tests can check the message for a
// library that is absent.
func loadLib(name string) error {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var buf [512]C.char
	var noDriver C.int
	if C.gc_load(cname, &noDriver, &buf[0], C.size_t(len(buf))) != 0 {
		msg := C.GoString(&buf[0])
		if noDriver != 0 {
			return &NoDriverError{Lib: name, Reason: msg}
		}
		return errors.New("cuda: " + msg)
	}
	loaded.Store(true) // cuGetErrorName is usable from here on
	if r := Result(C.gc_init()); r != Success {
		if r == ErrNoDevice {
			return &NoDriverError{Lib: name, Reason: "cuInit: " + r.Error()}
		}
		return fmt.Errorf("cuda: cuInit: %w", r)
	}
	return nil
}

// DriverVersion is the CUDA version the driver supports, as the driver
// encodes it (1000*major + 10*minor: 13000 for CUDA 13.0).
func DriverVersion() (int, error) {
	if err := Load(); err != nil {
		return 0, err
	}
	var v C.int
	if err := check("cuDriverGetVersion", C.gc_driver_version(&v)); err != nil {
		return 0, err
	}
	return int(v), nil
}
