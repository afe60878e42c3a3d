package ucx

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
	"unsafe"
)

// Features selects what a context can do (ucp_feature).
type Features uint64

const (
	FeatureTag    Features = C.UCP_FEATURE_TAG    // tag-matched send/receive
	FeatureRMA    Features = C.UCP_FEATURE_RMA    // put/get on registered memory
	FeatureAM     Features = C.UCP_FEATURE_AM     // active messages
	FeatureWakeup Features = C.UCP_FEATURE_WAKEUP // event fd, so Wait can sleep

	// DefaultFeatures is what Init asks for when Options.Features is zero.
	DefaultFeatures = FeatureTag | FeatureRMA | FeatureAM | FeatureWakeup
)

// Options configure Init.
type Options struct {
	// Features defaults to DefaultFeatures. Without FeatureWakeup, Wait
	// falls back to progress with 100 µs sleeps.
	Features Features
	// Config overrides UCX settings for this context only, by name without
	// the UCX_ prefix: {"TLS": "self,sm,tcp"}. Unset names keep the value
	// from the UCX_* environment variables or UCX's default.
	Config map[string]string
}

// Context is a UCP context (ucp_context_h): the set of transports and
// memory domains that workers of this process use. Create one per process.
type Context struct {
	mu      sync.Mutex
	h       C.ucp_context_h
	workers int
}

// Init loads libucp if needed and creates a context.
func Init(opts Options) (*Context, error) {
	if err := Load(); err != nil {
		return nil, err
	}
	features := opts.Features
	if features == 0 {
		features = DefaultFeatures
	}
	cfg := make(map[string]string, len(opts.Config)+1)
	for k, v := range opts.Config {
		cfg[k] = v
	}
	// UCX 1.13 with the wakeup feature leaves its keepalive timer fd
	// readable once it has fired, so the worker's event fd never sleeps
	// and Wait would spin (measured: a whole core while idle). Peer
	// failures still surface through the transports' own errors and the
	// callers' deadlines, so keepalive is off unless the caller or the
	// environment sets it.
	if _, set := cfg["KEEPALIVE_INTERVAL"]; !set && features&FeatureWakeup != 0 && os.Getenv("UCX_KEEPALIVE_INTERVAL") == "" {
		cfg["KEEPALIVE_INTERVAL"] = "inf"
	}
	// goring names the memory type of every buffer it hands UCX, so UCX's
	// memory-type cache can only mislead: it learns of device memory by
	// hooking the CUDA allocator, which goring's dlopen'd driver calls
	// bypass, and then treats device buffers as host memory whatever type
	// the request names (seen with UCX 1.22 on H100: the CPU copied from
	// GPU memory and faulted). Off unless the caller or the environment
	// says otherwise.
	if _, set := cfg["MEMTYPE_CACHE"]; !set && os.Getenv("UCX_MEMTYPE_CACHE") == "" {
		cfg["MEMTYPE_CACHE"] = "n"
	}
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ck := (**C.char)(C.calloc(C.size_t(len(keys)+1), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	cv := (**C.char)(C.calloc(C.size_t(len(keys)+1), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	defer C.free(unsafe.Pointer(ck))
	defer C.free(unsafe.Pointer(cv))
	ks := unsafe.Slice(ck, len(keys)+1)
	vs := unsafe.Slice(cv, len(keys)+1)
	for i, k := range keys {
		ks[i] = C.CString(k)
		vs[i] = C.CString(cfg[k])
	}
	defer func() {
		for i := range keys {
			C.free(unsafe.Pointer(ks[i]))
			C.free(unsafe.Pointer(vs[i]))
		}
	}()
	c := &Context{}
	bad := C.int(-1)
	st := C.gr_context_create(C.uint64_t(features), ck, cv, C.int(len(keys)), &bad, &c.h)
	if st != 0 {
		if bad >= 0 {
			k := keys[bad]
			return nil, fmt.Errorf("ucx: config UCX_%s=%q: %w", k, cfg[k], Status(st))
		}
		return nil, fmt.Errorf("ucx: init: %w", Status(st))
	}
	return c, nil
}

// MemoryTypes reports which memory types the context's transports can move
// (host always; cuda when UCX was built with CUDA support and a GPU is
// usable, and so on).
func (c *Context) MemoryTypes() (MemoryTypes, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.h == nil {
		return 0, errClosed
	}
	var m C.uint64_t
	if st := C.gr_context_memory_types(c.h, &m); st != 0 {
		return 0, fmt.Errorf("ucx: context query: %w", Status(st))
	}
	return MemoryTypes(m), nil
}

// Close releases the context. Every worker must be closed first.
func (c *Context) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.h == nil {
		return nil
	}
	if c.workers > 0 {
		return fmt.Errorf("ucx: context close: %d workers still open", c.workers)
	}
	C.gr_context_destroy(c.h)
	c.h = nil
	return nil
}

var errClosed = errors.New("ucx: use of a closed context, worker or endpoint")
