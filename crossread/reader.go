package crossread

/*
#cgo CFLAGS: -O2 -Wall
#include "crossread.h"
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/direct"
	"github.com/goring-hpc/goring/exec/reduce"
)

// CrossReader is package crossmem's Reader on Linux's process_vm_readv
// (crossread.c): one kernel copy from another process's memory, which
// needs the permission ptrace would (same user; Yama's ptrace_scope 0, or
// 1 with the target a descendant or allowing it). Reductions run cexec's
// kernels (kernels.c) on each piece as it arrives, and a reduced piece is
// written to the peers with process_vm_writev. Run's jobs go to the
// process's C worker threads (crosspool.c). A CrossReader serves one
// caller at a time (a team's calls); its zero value is ready.
type CrossReader struct {
	jobs []C.gx_xjob_t
	srcs []C.gx_xsrc_t
}

var _ direct.Reader = (*CrossReader)(nil)

// Pid is this process's id.
func (*CrossReader) Pid() int64 { return int64(os.Getpid()) }

// Read copies len(dst) bytes at addr of process pid (0: this one) into
// dst.
func (*CrossReader) Read(dst []byte, pid int64, addr uint64) error {
	if len(dst) == 0 {
		return nil
	}
	if rc := C.gx_cross_read(unsafe.Pointer(unsafe.SliceData(dst)), C.int64_t(pid), C.uint64_t(addr), C.size_t(len(dst))); rc != 0 {
		return fmt.Errorf("process_vm_readv of %d bytes at %#x of process %d: %w", len(dst), addr, pid, syscall.Errno(rc))
	}
	return nil
}

// Run does the jobs on up to threads threads: the caller's and the
// process's C workers, which stay awake between a collective's phases.
func (x *CrossReader) Run(jobs []direct.Job, threads int, d coll.Dtype, o coll.Op) error {
	esize := max(d.Size(), 1)
	x.jobs, x.srcs = x.jobs[:0], x.srcs[:0]
	nsrc := 0
	for _, j := range jobs {
		// A copy moves bytes whatever the dtype (an allgather's parts are
		// cut at any byte); only a reduction works in whole elements.
		whole := 1
		if len(j.Srcs) > 1 || len(j.Outs) > 0 {
			// exec/reduce's pairs are reduce.c's (cexec's tests check it).
			if _, err := reduce.Kernel(d, o); err != nil {
				return fmt.Errorf("crossread: %w", err)
			}
			whole = esize
		}
		if len(j.Srcs) == 0 || len(j.Srcs)+len(j.Outs) > 1<<13 || len(j.Dst)%whole != 0 {
			return fmt.Errorf("crossread: a job of %d bytes from %d operands to %d more places", len(j.Dst), len(j.Srcs), len(j.Outs))
		}
		nsrc += len(j.Srcs) + len(j.Outs)
	}
	if cap(x.srcs) < nsrc {
		x.srcs = make([]C.gx_xsrc_t, 0, nsrc)
	}
	for _, j := range jobs {
		if len(j.Dst) == 0 {
			continue
		}
		at := len(x.srcs)
		for _, s := range j.Srcs {
			x.srcs = append(x.srcs, C.gx_xsrc_t{pid: C.int64_t(s.Pid), addr: C.uint64_t(s.Addr)})
		}
		for _, s := range j.Outs {
			x.srcs = append(x.srcs, C.gx_xsrc_t{pid: C.int64_t(s.Pid), addr: C.uint64_t(s.Addr)})
		}
		job := C.gx_xjob_t{dst: C.uint64_t(uintptr(unsafe.Pointer(unsafe.SliceData(j.Dst)))),
			srcs: C.uint64_t(uintptr(unsafe.Pointer(&x.srcs[at]))), nsrc: C.int32_t(len(j.Srcs)),
			nout: C.int32_t(len(j.Outs)), n: C.uint64_t(len(j.Dst))}
		if len(j.Outs) > 0 {
			job.outs = C.uint64_t(uintptr(unsafe.Pointer(&x.srcs[at+len(j.Srcs)])))
		}
		x.jobs = append(x.jobs, job)
	}
	if len(x.jobs) == 0 {
		return nil
	}
	// The jobs name Go memory by address only: x.srcs and the jobs' Dst
	// stay referenced (and Go's heap does not move) until C returns.
	rc := C.gx_cross_run(&x.jobs[0], C.int(len(x.jobs)), C.int(threads), C.int(d), C.int(o), C.size_t(esize))
	runtime.KeepAlive(jobs)
	switch {
	case rc == -1:
		return fmt.Errorf("crossread: reduce.c has no kernel for dtype %v, op %v", d, o)
	case rc != 0:
		return fmt.Errorf("process_vm_readv or process_vm_writev: %w", syscall.Errno(rc))
	}
	return nil
}
