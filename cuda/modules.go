package cuda

/*
#include "shim.h"
*/
import "C"

import "sync"

// Kernel modules live once per GPU and process, in the GPU's primary
// context, which every Device of that GPU shares: a process that opens
// the GPU for many teams (one Device each) loads each family once, not
// once per team, and keeps no module per Device it has closed. The first
// load retains the primary context for the rest of the process, so that
// the modules' context outlives every Device (closing the last one would
// otherwise destroy it, and the cached functions with it).

// kernelHome is one GPU's loaded kernel families.
type kernelHome struct {
	retain    sync.Once
	retainErr error

	reduceOnce sync.Once
	reduce     *reduceModule
	reduceErr  error

	nodeOnce sync.Once
	node     *nodeModule
	nodeErr  error

	copyList, reduceList listModule
}

// homes holds each GPU's kernelHome, by ordinal.
var homes sync.Map // int -> *kernelHome

// home is d's GPU's kernelHome, its primary context retained.
func (d *Device) home() (*kernelHome, error) {
	v, _ := homes.LoadOrStore(d.ordinal, &kernelHome{})
	h := v.(*kernelHome)
	h.retain.Do(func() {
		var ctx C.gc_ctx
		h.retainErr = check("cuDevicePrimaryCtxRetain", C.gc_primary_ctx_retain(d.dev, &ctx))
	})
	return h, h.retainErr
}

// reduceKernels loads the reduction family once per GPU.
func (d *Device) reduceKernels() (*reduceModule, error) {
	h, err := d.home()
	if err != nil {
		return nil, err
	}
	h.reduceOnce.Do(func() { h.reduce, h.reduceErr = d.loadReduceKernels() })
	return h.reduce, h.reduceErr
}

// nodeKernels loads the node family once per GPU.
func (d *Device) nodeKernels() (*nodeModule, error) {
	h, err := d.home()
	if err != nil {
		return nil, err
	}
	h.nodeOnce.Do(func() { h.node, h.nodeErr = d.loadNodeKernels() })
	return h.node, h.nodeErr
}
