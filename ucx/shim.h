/*
 * shim.h: the C side of package ucx. libucp is opened with dlopen at run
 * time and called through function pointers, so the Go binary needs only
 * the UCX headers to build and -ldl to link. No function here calls into
 * Go, and no Go pointer is kept by C: operations carry a runtime/cgo.Handle
 * (an integer) that completion callbacks copy into a per-worker event queue,
 * which Go drains after each progress call.
 */
#ifndef GORING_UCX_SHIM_H
#define GORING_UCX_SHIM_H

#include <stddef.h>
#include <stdint.h>

#include <ucp/api/ucp.h>

/* Kinds of events in a worker's queue. */
enum {
    GR_EV_OP       = 0, /* a send or receive finished (handle = its Request) */
    GR_EV_EP_ERROR = 1  /* an endpoint failed (handle = its Endpoint) */
};

/* One completion as Go sees it (plain data, no pointers). */
typedef struct {
    uint64_t handle;     /* cgo.Handle given when the operation was posted */
    uint64_t sender_tag; /* receives: the tag of the matched message; sends: the tag */
    uint64_t length;     /* receives: bytes received; sends: bytes sent */
    int32_t  status;     /* ucs_status_t */
    int32_t  kind;       /* GR_EV_* */
} gr_event_t;

typedef struct gr_worker gr_worker_t;
typedef struct gr_ep     gr_ep_t;

/* Library loading; 0 on success, else -1 with a message in err. */
/* gr_loaded reports whether libname is already loaded in this process
 * (dlopen with RTLD_NOLOAD): inside Open MPI or UCC goring must use their
 * libucp, never load a second one. */
int         gr_loaded(const char *libname);
int         gr_load(const char *libname, char *err, size_t errlen);
const char *gr_status_string(int status);
void        gr_version(unsigned *major, unsigned *minor, unsigned *release);

/* Context. keys/vals are UCX configuration names without the UCX_ prefix. */
int  gr_context_create(uint64_t features, const char **keys, const char **vals,
                       int nkv, int *bad_kv, ucp_context_h *out);
void gr_context_destroy(ucp_context_h ctx);
int  gr_context_memory_types(ucp_context_h ctx, uint64_t *out);

/* Worker. */
int  gr_worker_create(ucp_context_h ctx, int thread_mode, gr_worker_t **out);
void gr_worker_destroy(gr_worker_t *w);
int  gr_worker_efd(gr_worker_t *w);
int  gr_worker_address(gr_worker_t *w, void **addr, size_t *len);
void gr_worker_release_address(gr_worker_t *w, void *addr);
int  gr_progress(gr_worker_t *w, gr_event_t *out, int cap);
int  gr_wait(gr_worker_t *w, int64_t timeout_us, int64_t spin_us, gr_event_t *out,
             int cap);
int  gr_worker_signal(gr_worker_t *w);
int  gr_worker_arm(gr_worker_t *w);
int  gr_queued(gr_worker_t *w);
int  gr_worker_flush(gr_worker_t *w, int64_t timeout_us);

/* Endpoints. */
int gr_ep_create(gr_worker_t *w, const void *addr, int peer_errors, uint64_t handle,
                 gr_ep_t **out);
/* Posts ucp_ep_close_nbx; returns like gr_tag_send below. The gr_ep_t is
 * freed when the close completes. */
int gr_ep_close(gr_ep_t *ep, int force, uint64_t handle, void **req);

/* Operations always post: they return UCS_INPROGRESS (1) with *req set, or
 * the status they finished with at once (UCS_OK or an error), whose
 * completion is queued all the same and reaches Go on the next progress. */
int gr_tag_send(gr_worker_t *w, gr_ep_t *ep, uintptr_t buf, size_t len,
                uint64_t tag, int mem_type, uint64_t handle, void **req);
int gr_tag_recv(gr_worker_t *w, uintptr_t buf, size_t len, uint64_t tag,
                uint64_t mask, int mem_type, uint64_t handle, void **req);

int  gr_request_status(void *req);

/* Operations for C callers (package cexec) that never reach Go. The caller
 * owns a gr_cop_t for each operation in flight (usually the first member of
 * its own per-operation record) and UCX calls op->done(op, status, length)
 * from inside ucp_worker_progress, the request already freed. They return
 * UCS_INPROGRESS (1) with *req set (for gr_request_cancel), or the status
 * the operation finished with at once, in which case done is not called.
 * A receive that matches a message already waiting calls done inside the
 * post: it returns UCS_INPROGRESS then and leaves *req as it was, since
 * that request is freed. Host memory only; receives match the full tag. */
typedef struct gr_cop {
    void (*done)(struct gr_cop *op, int status, uint64_t length);
} gr_cop_t;
int      gr_tag_send_c(gr_ep_t *ep, const void *buf, size_t len, uint64_t tag,
                       gr_cop_t *op, void **req);
int      gr_tag_recv_c(gr_worker_t *w, void *buf, size_t len, uint64_t tag,
                       gr_cop_t *op, void **req);
/* Progresses the worker once without handing events to Go (they stay
 * queued for Go's next gr_progress); returns what ucp_worker_progress
 * reported. */
unsigned gr_progress_c(gr_worker_t *w);
void gr_request_cancel(gr_worker_t *w, void *req);

#endif
