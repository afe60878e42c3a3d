/*
 * shim.c: dlopen of libcuda and thin wrappers over the driver API calls
 * that package cuda uses. Where the driver exports a versioned entry point
 * (cuMemAlloc_v2, ...) the versioned one is resolved: the unversioned names
 * are kept by the driver only for binaries built against CUDA 3.x and take
 * 32-bit sizes. Each wrapper that needs a context sets it current first
 * (see shim.h).
 */
#define _GNU_SOURCE
#include "shim.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define GC_FN(name, ...) static gc_result (*p_##name)(__VA_ARGS__)

GC_FN(cuInit, unsigned);
GC_FN(cuDriverGetVersion, int *);
GC_FN(cuGetErrorName, gc_result, const char **);
GC_FN(cuGetErrorString, gc_result, const char **);
GC_FN(cuDeviceGetCount, int *);
GC_FN(cuDeviceGet, gc_device *, int);
GC_FN(cuDeviceGetName, char *, int, gc_device);
GC_FN(cuDeviceGetPCIBusId, char *, int, gc_device);
GC_FN(cuDeviceTotalMem, size_t *, gc_device);
GC_FN(cuDeviceGetAttribute, int *, int, gc_device);
GC_FN(cuDeviceCanAccessPeer, int *, gc_device, gc_device);
GC_FN(cuDevicePrimaryCtxRetain, gc_ctx *, gc_device);
GC_FN(cuDevicePrimaryCtxRelease, gc_device);
GC_FN(cuCtxSetCurrent, gc_ctx);
GC_FN(cuCtxSynchronize, void);
GC_FN(cuCtxEnablePeerAccess, gc_ctx, unsigned);
GC_FN(cuMemGetInfo, size_t *, size_t *);
GC_FN(cuMemAlloc, gc_dptr *, size_t);
GC_FN(cuMemFree, gc_dptr);
GC_FN(cuMemHostAlloc, void **, size_t, unsigned);
GC_FN(cuMemFreeHost, void *);
GC_FN(cuMemHostGetDevicePointer, gc_dptr *, void *, unsigned);
GC_FN(cuMemsetD8, gc_dptr, unsigned char, size_t);
GC_FN(cuMemsetD8Async, gc_dptr, unsigned char, size_t, gc_stream);
GC_FN(cuMemcpyHtoD, gc_dptr, const void *, size_t);
GC_FN(cuMemcpyDtoH, void *, gc_dptr, size_t);
GC_FN(cuMemcpyDtoD, gc_dptr, gc_dptr, size_t);
GC_FN(cuMemcpyPeer, gc_dptr, gc_ctx, gc_dptr, gc_ctx, size_t);
GC_FN(cuMemcpyHtoDAsync, gc_dptr, const void *, size_t, gc_stream);
GC_FN(cuMemcpyDtoHAsync, void *, gc_dptr, size_t, gc_stream);
GC_FN(cuMemcpyDtoDAsync, gc_dptr, gc_dptr, size_t, gc_stream);
GC_FN(cuMemcpyPeerAsync, gc_dptr, gc_ctx, gc_dptr, gc_ctx, size_t, gc_stream);
GC_FN(cuStreamCreate, gc_stream *, unsigned);
GC_FN(cuStreamDestroy, gc_stream);
GC_FN(cuStreamSynchronize, gc_stream);
GC_FN(cuStreamQuery, gc_stream);
GC_FN(cuStreamWaitEvent, gc_stream, gc_event, unsigned);
GC_FN(cuStreamGetCtx, gc_stream, gc_ctx *);
GC_FN(cuEventCreate, gc_event *, unsigned);
GC_FN(cuEventDestroy, gc_event);
GC_FN(cuEventRecord, gc_event, gc_stream);
GC_FN(cuEventQuery, gc_event);
GC_FN(cuEventSynchronize, gc_event);
GC_FN(cuEventElapsedTime, float *, gc_event, gc_event);
GC_FN(cuIpcGetMemHandle, gc_ipc_handle *, gc_dptr);
GC_FN(cuIpcOpenMemHandle, gc_dptr *, gc_ipc_handle, unsigned);
GC_FN(cuIpcCloseMemHandle, gc_dptr);
GC_FN(cuModuleLoadDataEx, gc_module *, const void *, unsigned, int *, void **);
GC_FN(cuModuleGetFunction, gc_function *, gc_module, const char *);
GC_FN(cuModuleUnload, gc_module);
GC_FN(cuLaunchKernel, gc_function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
      unsigned, gc_stream, void **, void **);
GC_FN(cuPointerGetAttribute, void *, int, gc_dptr);
GC_FN(cuMemGetAddressRange, gc_dptr *, size_t *, gc_dptr);
/* Stream-ordered allocation (CUDA 11.2 drivers on): optional, NULL where
 * the driver lacks it (gc_mem_alloc_async then says so). */
GC_FN(cuMemAllocAsync, gc_dptr *, size_t, gc_stream);
GC_FN(cuMemFreeAsync, gc_dptr, gc_stream);

int gc_load(const char *libname, int *no_driver, char *err, size_t errlen)
{
    *no_driver = 0;
    void *h = dlopen(libname, RTLD_NOW | RTLD_GLOBAL);
    if (h == NULL) {
        *no_driver = 1;
        snprintf(err, errlen, "%s", dlerror());
        return -1;
    }
    /* Resolve the first of the names that the driver exports. */
#define GC_SYM(fn, ...)                                                        \
    do {                                                                       \
        const char *names_[] = {__VA_ARGS__, NULL};                            \
        p_##fn = NULL;                                                         \
        for (int i_ = 0; names_[i_] != NULL && p_##fn == NULL; i_++)           \
            *(void **)&p_##fn = dlsym(h, names_[i_]);                          \
        if (p_##fn == NULL) {                                                  \
            snprintf(err, errlen, "%s: missing driver entry point %s", libname, \
                     names_[0]);                                               \
            return -1;                                                         \
        }                                                                      \
    } while (0)
    GC_SYM(cuInit, "cuInit");
    GC_SYM(cuDriverGetVersion, "cuDriverGetVersion");
    GC_SYM(cuGetErrorName, "cuGetErrorName");
    GC_SYM(cuGetErrorString, "cuGetErrorString");
    GC_SYM(cuDeviceGetCount, "cuDeviceGetCount");
    GC_SYM(cuDeviceGet, "cuDeviceGet");
    GC_SYM(cuDeviceGetName, "cuDeviceGetName");
    GC_SYM(cuDeviceGetPCIBusId, "cuDeviceGetPCIBusId");
    GC_SYM(cuDeviceTotalMem, "cuDeviceTotalMem_v2");
    GC_SYM(cuDeviceGetAttribute, "cuDeviceGetAttribute");
    GC_SYM(cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer");
    GC_SYM(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    GC_SYM(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    GC_SYM(cuCtxSetCurrent, "cuCtxSetCurrent");
    GC_SYM(cuCtxSynchronize, "cuCtxSynchronize");
    GC_SYM(cuCtxEnablePeerAccess, "cuCtxEnablePeerAccess");
    GC_SYM(cuMemGetInfo, "cuMemGetInfo_v2");
    GC_SYM(cuMemAlloc, "cuMemAlloc_v2");
    GC_SYM(cuMemFree, "cuMemFree_v2");
    GC_SYM(cuMemHostAlloc, "cuMemHostAlloc");
    GC_SYM(cuMemFreeHost, "cuMemFreeHost");
    GC_SYM(cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2");
    GC_SYM(cuMemsetD8, "cuMemsetD8_v2");
    GC_SYM(cuMemsetD8Async, "cuMemsetD8Async");
    GC_SYM(cuMemcpyHtoD, "cuMemcpyHtoD_v2");
    GC_SYM(cuMemcpyDtoH, "cuMemcpyDtoH_v2");
    GC_SYM(cuMemcpyDtoD, "cuMemcpyDtoD_v2");
    GC_SYM(cuMemcpyPeer, "cuMemcpyPeer");
    GC_SYM(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
    GC_SYM(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
    GC_SYM(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
    GC_SYM(cuMemcpyPeerAsync, "cuMemcpyPeerAsync");
    GC_SYM(cuStreamCreate, "cuStreamCreate");
    GC_SYM(cuStreamDestroy, "cuStreamDestroy_v2");
    GC_SYM(cuStreamSynchronize, "cuStreamSynchronize");
    GC_SYM(cuStreamQuery, "cuStreamQuery");
    GC_SYM(cuStreamWaitEvent, "cuStreamWaitEvent");
    GC_SYM(cuStreamGetCtx, "cuStreamGetCtx");
    GC_SYM(cuEventCreate, "cuEventCreate");
    GC_SYM(cuEventDestroy, "cuEventDestroy_v2");
    GC_SYM(cuEventRecord, "cuEventRecord");
    GC_SYM(cuEventQuery, "cuEventQuery");
    GC_SYM(cuEventSynchronize, "cuEventSynchronize");
    /* CUDA 12.8 added a _v2 with the same signature; 13 headers map to it. */
    GC_SYM(cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime");
    GC_SYM(cuIpcGetMemHandle, "cuIpcGetMemHandle");
    GC_SYM(cuIpcOpenMemHandle, "cuIpcOpenMemHandle_v2");
    GC_SYM(cuIpcCloseMemHandle, "cuIpcCloseMemHandle");
    GC_SYM(cuModuleLoadDataEx, "cuModuleLoadDataEx");
    GC_SYM(cuModuleGetFunction, "cuModuleGetFunction");
    GC_SYM(cuModuleUnload, "cuModuleUnload");
    GC_SYM(cuLaunchKernel, "cuLaunchKernel");
    GC_SYM(cuPointerGetAttribute, "cuPointerGetAttribute");
    GC_SYM(cuMemGetAddressRange, "cuMemGetAddressRange_v2");
    *(void **)&p_cuMemAllocAsync = dlsym(h, "cuMemAllocAsync");
    *(void **)&p_cuMemFreeAsync = dlsym(h, "cuMemFreeAsync");
    return 0;
}

gc_result gc_init(void) { return p_cuInit(0); }
gc_result gc_driver_version(int *v) { return p_cuDriverGetVersion(v); }

const char *gc_error_name(gc_result r)
{
    const char *s = NULL;
    if (p_cuGetErrorName == NULL || p_cuGetErrorName(r, &s) != 0)
        return NULL;
    return s;
}

const char *gc_error_string(gc_result r)
{
    const char *s = NULL;
    if (p_cuGetErrorString == NULL || p_cuGetErrorString(r, &s) != 0)
        return NULL;
    return s;
}

gc_result gc_device_count(int *n) { return p_cuDeviceGetCount(n); }
gc_result gc_device_get(int ordinal, gc_device *d) { return p_cuDeviceGet(d, ordinal); }
gc_result gc_device_name(gc_device d, char *name, int len) { return p_cuDeviceGetName(name, len, d); }
gc_result gc_device_pci_bus_id(gc_device d, char *id, int len) { return p_cuDeviceGetPCIBusId(id, len, d); }
gc_result gc_device_total_mem(gc_device d, size_t *bytes) { return p_cuDeviceTotalMem(bytes, d); }
gc_result gc_device_attribute(gc_device d, int attr, int *v) { return p_cuDeviceGetAttribute(v, attr, d); }
gc_result gc_device_can_access_peer(gc_device d, gc_device peer, int *can)
{
    return p_cuDeviceCanAccessPeer(can, d, peer);
}

gc_result gc_primary_ctx_retain(gc_device d, gc_ctx *ctx) { return p_cuDevicePrimaryCtxRetain(ctx, d); }
gc_result gc_primary_ctx_release(gc_device d) { return p_cuDevicePrimaryCtxRelease(d); }

/* Sets ctx current on this thread and returns on failure. */
#define GC_CURRENT(ctx)                                                        \
    do {                                                                       \
        gc_result r_ = p_cuCtxSetCurrent(ctx);                                 \
        if (r_ != 0)                                                           \
            return r_;                                                         \
    } while (0)

gc_result gc_ctx_synchronize(gc_ctx ctx)
{
    GC_CURRENT(ctx);
    return p_cuCtxSynchronize();
}

gc_result gc_ctx_enable_peer_access(gc_ctx ctx, gc_ctx peer)
{
    GC_CURRENT(ctx);
    return p_cuCtxEnablePeerAccess(peer, 0);
}

gc_result gc_mem_get_info(gc_ctx ctx, size_t *free_bytes, size_t *total_bytes)
{
    GC_CURRENT(ctx);
    return p_cuMemGetInfo(free_bytes, total_bytes);
}

gc_result gc_mem_alloc(gc_ctx ctx, gc_dptr *p, size_t bytes)
{
    GC_CURRENT(ctx);
    return p_cuMemAlloc(p, bytes);
}

gc_result gc_mem_free(gc_ctx ctx, gc_dptr p)
{
    GC_CURRENT(ctx);
    return p_cuMemFree(p);
}

/* Memory from the device's default stream-ordered pool, allocated and
 * freed on the legacy default stream and waited for: what frameworks that
 * use cudaMallocAsync hand a collective. CUDA_ERROR_NOT_SUPPORTED (801)
 * where the driver has no such entry point. */
gc_result gc_mem_alloc_async(gc_ctx ctx, gc_dptr *p, size_t bytes)
{
    if (p_cuMemAllocAsync == NULL)
        return 801;
    GC_CURRENT(ctx);
    gc_result r = p_cuMemAllocAsync(p, bytes, NULL);
    return r != 0 ? r : p_cuCtxSynchronize();
}

gc_result gc_mem_free_async(gc_ctx ctx, gc_dptr p)
{
    if (p_cuMemFreeAsync == NULL)
        return 801;
    GC_CURRENT(ctx);
    gc_result r = p_cuMemFreeAsync(p, NULL);
    return r != 0 ? r : p_cuCtxSynchronize();
}

gc_result gc_mem_host_alloc(gc_ctx ctx, void **p, size_t bytes, unsigned flags)
{
    GC_CURRENT(ctx);
    return p_cuMemHostAlloc(p, bytes, flags);
}

gc_result gc_mem_free_host(gc_ctx ctx, void *p)
{
    GC_CURRENT(ctx);
    return p_cuMemFreeHost(p);
}

gc_result gc_memset_d8(gc_ctx ctx, gc_dptr p, unsigned char v, size_t n)
{
    GC_CURRENT(ctx);
    return p_cuMemsetD8(p, v, n);
}

gc_result gc_memset_d8_async(gc_ctx ctx, gc_dptr p, unsigned char v, size_t n, gc_stream s)
{
    GC_CURRENT(ctx);
    return p_cuMemsetD8Async(p, v, n, s);
}

gc_result gc_memcpy_htod(gc_ctx ctx, gc_dptr dst, const void *src, size_t n)
{
    GC_CURRENT(ctx);
    return p_cuMemcpyHtoD(dst, src, n);
}

gc_result gc_memcpy_dtoh(gc_ctx ctx, void *dst, gc_dptr src, size_t n)
{
    GC_CURRENT(ctx);
    return p_cuMemcpyDtoH(dst, src, n);
}

gc_result gc_memcpy_dtod(gc_ctx ctx, gc_dptr dst, gc_dptr src, size_t n)
{
    GC_CURRENT(ctx);
    return p_cuMemcpyDtoD(dst, src, n);
}

gc_result gc_memcpy_peer(gc_ctx ctx, gc_dptr dst, gc_ctx dctx, gc_dptr src, gc_ctx sctx, size_t n)
{
    GC_CURRENT(ctx);
    return p_cuMemcpyPeer(dst, dctx, src, sctx, n);
}

gc_result gc_memcpy_htod_async(gc_ctx ctx, gc_dptr dst, uintptr_t src, size_t n, gc_stream s)
{
    GC_CURRENT(ctx);
    return p_cuMemcpyHtoDAsync(dst, (const void *)src, n, s);
}

gc_result gc_memcpy_dtoh_async(gc_ctx ctx, uintptr_t dst, gc_dptr src, size_t n, gc_stream s)
{
    GC_CURRENT(ctx);
    return p_cuMemcpyDtoHAsync((void *)dst, src, n, s);
}

/* Pageable host memory, ordered on s: the driver returns once it has
 * taken the source (htod) or delivered the bytes (dtoh). */
gc_result gc_memcpy_htod_pageable(gc_ctx ctx, gc_dptr dst, const void *src, size_t n, gc_stream s)
{
    GC_CURRENT(ctx);
    return p_cuMemcpyHtoDAsync(dst, src, n, s);
}

gc_result gc_memcpy_dtoh_pageable(gc_ctx ctx, void *dst, gc_dptr src, size_t n, gc_stream s)
{
    GC_CURRENT(ctx);
    return p_cuMemcpyDtoHAsync(dst, src, n, s);
}

gc_result gc_memcpy_dtod_async(gc_ctx ctx, gc_dptr dst, gc_dptr src, size_t n, gc_stream s)
{
    GC_CURRENT(ctx);
    return p_cuMemcpyDtoDAsync(dst, src, n, s);
}

gc_result gc_memcpy_peer_async(gc_ctx ctx, gc_dptr dst, gc_ctx dctx, gc_dptr src, gc_ctx sctx,
                               size_t n, gc_stream s)
{
    GC_CURRENT(ctx);
    return p_cuMemcpyPeerAsync(dst, dctx, src, sctx, n, s);
}

gc_result gc_stream_create(gc_ctx ctx, gc_stream *s, unsigned flags)
{
    GC_CURRENT(ctx);
    return p_cuStreamCreate(s, flags);
}

gc_result gc_stream_destroy(gc_ctx ctx, gc_stream s)
{
    GC_CURRENT(ctx);
    return p_cuStreamDestroy(s);
}

gc_result gc_stream_synchronize(gc_ctx ctx, gc_stream s)
{
    GC_CURRENT(ctx);
    return p_cuStreamSynchronize(s);
}

gc_result gc_stream_query(gc_ctx ctx, gc_stream s)
{
    GC_CURRENT(ctx);
    return p_cuStreamQuery(s);
}

gc_result gc_stream_wait_event(gc_ctx ctx, gc_stream s, gc_event e)
{
    GC_CURRENT(ctx);
    return p_cuStreamWaitEvent(s, e, 0);
}

gc_result gc_stream_ctx(gc_stream s, gc_ctx *ctx)
{
    return p_cuStreamGetCtx(s, ctx);
}

gc_result gc_event_create(gc_ctx ctx, gc_event *e, unsigned flags)
{
    GC_CURRENT(ctx);
    return p_cuEventCreate(e, flags);
}

gc_result gc_event_destroy(gc_ctx ctx, gc_event e)
{
    GC_CURRENT(ctx);
    return p_cuEventDestroy(e);
}

gc_result gc_event_record(gc_ctx ctx, gc_event e, gc_stream s)
{
    GC_CURRENT(ctx);
    return p_cuEventRecord(e, s);
}

gc_result gc_event_query(gc_ctx ctx, gc_event e)
{
    GC_CURRENT(ctx);
    return p_cuEventQuery(e);
}

gc_result gc_event_synchronize(gc_ctx ctx, gc_event e)
{
    GC_CURRENT(ctx);
    return p_cuEventSynchronize(e);
}

gc_result gc_event_elapsed_ms(gc_ctx ctx, float *ms, gc_event start, gc_event end)
{
    GC_CURRENT(ctx);
    return p_cuEventElapsedTime(ms, start, end);
}

gc_result gc_ipc_get_mem_handle(gc_ctx ctx, gc_ipc_handle *h, gc_dptr p)
{
    GC_CURRENT(ctx);
    return p_cuIpcGetMemHandle(h, p);
}

gc_result gc_ipc_open_mem_handle(gc_ctx ctx, gc_dptr *p, gc_ipc_handle h, unsigned flags)
{
    GC_CURRENT(ctx);
    return p_cuIpcOpenMemHandle(p, h, flags);
}

gc_result gc_ipc_close_mem_handle(gc_ctx ctx, gc_dptr p)
{
    GC_CURRENT(ctx);
    return p_cuIpcCloseMemHandle(p);
}

/* CUjit_option values: the JIT's error log and its size. */
enum { GC_JIT_ERROR_LOG_BUFFER = 5, GC_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6 };

gc_result gc_module_load(gc_ctx ctx, gc_module *m, const void *image, char *log, size_t loglen)
{
    GC_CURRENT(ctx);
    int   opts[] = {GC_JIT_ERROR_LOG_BUFFER, GC_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {log, (void *)(uintptr_t)loglen};
    if (loglen > 0) log[0] = '\0';
    return p_cuModuleLoadDataEx(m, image, 2, opts, vals);
}

gc_result gc_module_function(gc_ctx ctx, gc_function *f, gc_module m, const char *name)
{
    GC_CURRENT(ctx);
    return p_cuModuleGetFunction(f, m, name);
}

gc_result gc_module_unload(gc_ctx ctx, gc_module m)
{
    GC_CURRENT(ctx);
    return p_cuModuleUnload(m);
}

gc_result gc_launch_reduce(gc_ctx ctx, gc_function f, unsigned grid, unsigned block, gc_stream s,
                           gc_dptr dst, gc_dptr src, unsigned long long n)
{
    GC_CURRENT(ctx);
    void *params[] = {&dst, &src, &n};
    return p_cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, s, params, NULL);
}

gc_result gc_launch_multi(gc_ctx ctx, gc_function f, unsigned grid, unsigned block, gc_stream s,
                          const gc_multi_args *a)
{
    GC_CURRENT(ctx);
    gc_multi_args copy = *a; /* the driver copies the argument at launch */
    void         *params[] = {&copy};
    return p_cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, s, params, NULL);
}

gc_result gc_launch_node(gc_ctx ctx, gc_function f, unsigned grid, unsigned block, gc_stream s,
                         const gc_node_args *a)
{
    GC_CURRENT(ctx);
    gc_node_args copy = *a;
    void        *params[] = {&copy};
    return p_cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, s, params, NULL);
}

gc_result gc_launch_copy_list(gc_ctx ctx, gc_function f, unsigned grid, unsigned block, gc_stream s,
                              gc_dptr list, const gc_copy_desc *host, unsigned long long n)
{
    GC_CURRENT(ctx);
    gc_result r = p_cuMemcpyHtoDAsync(list, host, n * sizeof(gc_copy_desc), s);
    if (r != 0) {
        return r;
    }
    void *params[] = {&list, &n};
    return p_cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, s, params, NULL);
}

gc_result gc_mem_host_get_device_pointer(gc_ctx ctx, gc_dptr *d, void *p)
{
    GC_CURRENT(ctx);
    return p_cuMemHostGetDevicePointer(d, p, 0);
}

gc_result gc_pointer_attribute(int attr, void *out, gc_dptr p)
{
    return p_cuPointerGetAttribute(out, attr, p);
}

/* The three attributes a call's buffer is classified by, in one crossing
 * from Go (a call's classification is on every collective's path): the
 * first failure's result, and *which says which query failed (0, 1, 2). */
gc_result gc_pointer_info(gc_dptr p, unsigned *mem_type, int *managed, int *ordinal, int *which)
{
    gc_result r;
    *which = 0;
    if ((r = p_cuPointerGetAttribute(mem_type, GC_ATTR_MEMORY_TYPE, p)) != 0) {
        return r;
    }
    *which = 1;
    if ((r = p_cuPointerGetAttribute(managed, GC_ATTR_IS_MANAGED, p)) != 0) {
        return r;
    }
    *which = 2;
    return p_cuPointerGetAttribute(ordinal, GC_ATTR_DEVICE_ORDINAL, p);
}

gc_result gc_mem_get_address_range(gc_ctx ctx, gc_dptr *base, size_t *size, gc_dptr p)
{
    GC_CURRENT(ctx);
    return p_cuMemGetAddressRange(base, size, p);
}

gc_result gc_ctx_make_current(gc_ctx ctx)
{
    return p_cuCtxSetCurrent(ctx);
}
