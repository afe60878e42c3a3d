/*
 * shim.h: the C side of package cuda. libcuda (the CUDA driver API) is
 * opened with dlopen at run time and called through function pointers, so
 * goring builds without CUDA headers or libraries and starts on a machine
 * without a GPU. The few driver types used are declared here with the
 * driver's ABI (they have been stable since CUDA 4).
 *
 * Every function that needs a CUDA context takes it as its first argument
 * and makes it current on the calling OS thread before the driver call.
 * One cgo call runs on one OS thread from start to end, so the context is
 * right for that call whatever thread Go picked; Go code never depends on
 * a context being current between calls.
 */
#ifndef GORING_CUDA_SHIM_H
#define GORING_CUDA_SHIM_H

#include <stddef.h>
#include <stdint.h>

typedef int                gc_result; /* CUresult */
typedef int                gc_device; /* CUdevice */
typedef void              *gc_ctx;    /* CUcontext */
typedef void              *gc_stream; /* CUstream */
typedef void              *gc_event;  /* CUevent */
typedef unsigned long long gc_dptr;   /* CUdeviceptr (64-bit) */
typedef void              *gc_module;   /* CUmodule */
typedef void              *gc_function; /* CUfunction */

/* CUipcMemHandle: 64 opaque bytes, passed by value. */
typedef struct {
    char reserved[64];
} gc_ipc_handle;

/* Loading: 0 on success, else -1 with a message in err (and *no_driver set
 * to 1 when the library itself is absent). */
int gc_load(const char *libname, int *no_driver, char *err, size_t errlen);
/* cuInit(0) */
gc_result gc_init(void);
gc_result gc_driver_version(int *v);
/* Names and texts of CUresult values; NULL when unknown. */
const char *gc_error_name(gc_result r);
const char *gc_error_string(gc_result r);

/* Devices. */
gc_result gc_device_count(int *n);
gc_result gc_device_get(int ordinal, gc_device *d);
gc_result gc_device_name(gc_device d, char *name, int len);
gc_result gc_device_pci_bus_id(gc_device d, char *id, int len);
gc_result gc_device_total_mem(gc_device d, size_t *bytes);
gc_result gc_device_attribute(gc_device d, int attr, int *v);
gc_result gc_device_can_access_peer(gc_device d, gc_device peer, int *can);

/* Primary contexts. */
gc_result gc_primary_ctx_retain(gc_device d, gc_ctx *ctx);
gc_result gc_primary_ctx_release(gc_device d);
gc_result gc_ctx_synchronize(gc_ctx ctx);
gc_result gc_ctx_enable_peer_access(gc_ctx ctx, gc_ctx peer);
gc_result gc_mem_get_info(gc_ctx ctx, size_t *free_bytes, size_t *total_bytes);

/* Memory. */
gc_result gc_mem_alloc(gc_ctx ctx, gc_dptr *p, size_t bytes);
gc_result gc_mem_free(gc_ctx ctx, gc_dptr p);
gc_result gc_mem_alloc_async(gc_ctx ctx, gc_dptr *p, size_t bytes);
gc_result gc_mem_free_async(gc_ctx ctx, gc_dptr p);
gc_result gc_mem_host_alloc(gc_ctx ctx, void **p, size_t bytes, unsigned flags);
gc_result gc_mem_free_host(gc_ctx ctx, void *p);
gc_result gc_memset_d8(gc_ctx ctx, gc_dptr p, unsigned char v, size_t n);
gc_result gc_memset_d8_async(gc_ctx ctx, gc_dptr p, unsigned char v, size_t n, gc_stream s);
gc_result gc_memcpy_htod(gc_ctx ctx, gc_dptr dst, const void *src, size_t n);
gc_result gc_memcpy_dtoh(gc_ctx ctx, void *dst, gc_dptr src, size_t n);
gc_result gc_memcpy_dtod(gc_ctx ctx, gc_dptr dst, gc_dptr src, size_t n);
gc_result gc_memcpy_peer(gc_ctx ctx, gc_dptr dst, gc_ctx dctx, gc_dptr src, gc_ctx sctx, size_t n);
gc_result gc_memcpy_htod_async(gc_ctx ctx, gc_dptr dst, uintptr_t src, size_t n, gc_stream s);
gc_result gc_memcpy_dtoh_async(gc_ctx ctx, uintptr_t dst, gc_dptr src, size_t n, gc_stream s);
gc_result gc_memcpy_htod_pageable(gc_ctx ctx, gc_dptr dst, const void *src, size_t n, gc_stream s);
gc_result gc_memcpy_dtoh_pageable(gc_ctx ctx, void *dst, gc_dptr src, size_t n, gc_stream s);
gc_result gc_memcpy_dtod_async(gc_ctx ctx, gc_dptr dst, gc_dptr src, size_t n, gc_stream s);
gc_result gc_memcpy_peer_async(gc_ctx ctx, gc_dptr dst, gc_ctx dctx, gc_dptr src, gc_ctx sctx,
                               size_t n, gc_stream s);

/* Streams and events. */
gc_result gc_stream_create(gc_ctx ctx, gc_stream *s, unsigned flags);
gc_result gc_stream_destroy(gc_ctx ctx, gc_stream s);
gc_result gc_stream_synchronize(gc_ctx ctx, gc_stream s);
gc_result gc_stream_query(gc_ctx ctx, gc_stream s);
gc_result gc_stream_wait_event(gc_ctx ctx, gc_stream s, gc_event e);
/* The context a stream belongs to (cuStreamGetCtx); needs no current one. */
gc_result gc_stream_ctx(gc_stream s, gc_ctx *ctx);
gc_result gc_event_create(gc_ctx ctx, gc_event *e, unsigned flags);
gc_result gc_event_destroy(gc_ctx ctx, gc_event e);
gc_result gc_event_record(gc_ctx ctx, gc_event e, gc_stream s);
gc_result gc_event_query(gc_ctx ctx, gc_event e);
gc_result gc_event_synchronize(gc_ctx ctx, gc_event e);
gc_result gc_event_elapsed_ms(gc_ctx ctx, float *ms, gc_event start, gc_event end);

/* IPC. */
gc_result gc_ipc_get_mem_handle(gc_ctx ctx, gc_ipc_handle *h, gc_dptr p);
gc_result gc_ipc_open_mem_handle(gc_ctx ctx, gc_dptr *p, gc_ipc_handle h, unsigned flags);
gc_result gc_ipc_close_mem_handle(gc_ctx ctx, gc_dptr p);

/* Modules and kernels. gc_module_load takes a cubin or NUL-terminated PTX
 * image and leaves the JIT's error log (if any) in log. gc_launch_reduce
 * launches a kernel of signature (dst, src, n elements) on a 1-D grid. */
gc_result gc_module_load(gc_ctx ctx, gc_module *m, const void *image, char *log, size_t loglen);
gc_result gc_module_function(gc_ctx ctx, gc_function *f, gc_module m, const char *name);
gc_result gc_module_unload(gc_ctx ctx, gc_module m);
gc_result gc_launch_reduce(gc_ctx ctx, gc_function f, unsigned grid, unsigned block, gc_stream s,
                           gc_dptr dst, gc_dptr src, unsigned long long n);

/* The multi kernels' one argument, laid out as kernels/reduce.cu's
 * multi_args: up to GC_MULTI_MAX source and destination addresses, the
 * counts used, n (elements of a reduction, bytes of a copy). */
#define GC_MULTI_MAX 8
typedef struct {
    unsigned long long src[GC_MULTI_MAX];
    unsigned long long dst[GC_MULTI_MAX];
    unsigned int       nsrc, ndst;
    unsigned long long n;
} gc_multi_args;
gc_result gc_launch_multi(gc_ctx ctx, gc_function f, unsigned grid, unsigned block, gc_stream s,
                          const gc_multi_args *a);

/* The node collectives' one argument, laid out as kernels/node.cu's
 * node_args. */
#define GC_NODE_MAX_RANKS 8
typedef struct {
    unsigned long long peer[GC_NODE_MAX_RANKS];
    unsigned long long in, out;
    unsigned long long abort_word, status, done;
    unsigned long long epoch, count, slot_bytes, stride;
    unsigned long long ring, mailbox, linger; /* a resident kernel's (devsync/resident.go); ring 0: none */
    unsigned int       rank, nranks, root;
} gc_node_args;
gc_result gc_launch_node(gc_ctx ctx, gc_function f, unsigned grid, unsigned block, gc_stream s,
                         const gc_node_args *a);

/* The copy list's descriptors, laid out as kernels/copylist.cu's
 * copy_desc. gc_launch_copy_list uploads n of them from host memory
 * (pageable: the driver has read them when the call returns) into list,
 * device memory of ctx, with cuMemcpyHtoDAsync on s, then launches
 * f(list, n) on s. */
typedef struct {
    unsigned long long src, dst, bytes;
} gc_copy_desc;
gc_result gc_launch_copy_list(gc_ctx ctx, gc_function f, unsigned grid, unsigned block, gc_stream s,
                              gc_dptr list, const gc_copy_desc *host, unsigned long long n);

/* cuMemHostGetDevicePointer: the device address of mapped pinned memory
 * (allocated with CU_MEMHOSTALLOC_DEVICEMAP) in ctx. */
gc_result gc_mem_host_get_device_pointer(gc_ctx ctx, gc_dptr *d, void *p);

/* cuCtxSetCurrent on the calling thread, for libraries that use the
 * current context (UCX's CUDA transports). */
gc_result gc_ctx_make_current(gc_ctx ctx);

/* cuPointerGetAttribute (no context needed). */
gc_result gc_pointer_attribute(int attr, void *out, gc_dptr p);
/* CUpointer_attribute values gc_pointer_info reads (cuda.h's numbers). */
enum { GC_ATTR_MEMORY_TYPE = 2, GC_ATTR_IS_MANAGED = 8, GC_ATTR_DEVICE_ORDINAL = 9 };
gc_result gc_pointer_info(gc_dptr p, unsigned *mem_type, int *managed, int *ordinal, int *which);
gc_result gc_mem_get_address_range(gc_ctx ctx, gc_dptr *base, size_t *size, gc_dptr p);

#endif
