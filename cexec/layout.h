/*
 * layout.h: UCC's meaning of a call's two buffers, in one place for the C
 * side (team/layout.go is the Go side's): which of the caller's pointers
 * a call needs, and which hold the collective's input (src) and its
 * output (dst).
 *
 *   - bcast: one buffer, input and output alike (dst, else src);
 *   - not in place: src is the input, dst the output;
 *   - in-place allgather: the input is the rank's own block of dst;
 *   - in-place allreduce and reduce_scatter: dst holds the whole input,
 *     and the output is all of it (allreduce) or the rank's block of it
 *     (reduce_scatter: dst + rank * size_dst bytes).
 *
 * Go picks a program's case when it lowers it (team/layout.go's
 * cpathLayout, cexec.Layout); the executor places every call of the
 * program with gx_layout_place, and the adapter's C path checks a call's
 * pointers with gx_layout_pointers_ok before it runs one. A sched program
 * receives into its output while it still reads its input, so where the
 * two overlap (GX_LAYOUT_COPY_IN) the program runs on a private copy of
 * the input, as the Go side's machine does.
 *
 * Plain C, no dependencies: any of goring's C code may include it.
 */
#ifndef GORING_LAYOUT_H
#define GORING_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The cases (cexec.Layout): the caller's own buffers; one buffer for both
 * (bcast); src is this rank's block of dst (allgather in place); src is a
 * private copy of the first size_src bytes of dst, the result going to dst
 * shifted by rank * size_dst bytes when dst_shift is set (allreduce and,
 * shifted, reduce_scatter in place). */
enum { GX_LAYOUT_PLAIN = 0, GX_LAYOUT_ONE_BUFFER, GX_LAYOUT_SRC_IN_DST, GX_LAYOUT_COPY_IN };

/* gx_layout_copies_input says whether a call of layout runs on a private
 * copy of its input (size_src bytes its caller provides as own). */
static inline int gx_layout_copies_input(int32_t layout)
{
    return layout == GX_LAYOUT_COPY_IN;
}

/* gx_layout_pointers_ok says whether a call has the pointers its case
 * needs: a bcast either of its two (its one buffer), any other call dst,
 * and src unless in place. */
static inline int gx_layout_pointers_ok(int bcast, int in_place, const void *src, const void *dst)
{
    if (bcast) {
        return dst != NULL || src != NULL;
    }
    return dst != NULL && (in_place || src != NULL);
}

/* gx_layout_place sets *in and *out to the input and output of a call of
 * layout over the caller's src and dst at rank (size_src and size_dst
 * bytes: an allgather's and a reduce_scatter's block); a GX_LAYOUT_COPY_IN
 * call's input is first copied into own (gx_layout_copies_input). */
static inline void gx_layout_place(int32_t layout, int32_t dst_shift, int32_t rank, int64_t size_src,
                                   int64_t size_dst, char *own, const void *src, void *dst, char **in,
                                   char **out)
{
    char *s = (char *)src, *d = (char *)dst;
    switch (layout) {
    case GX_LAYOUT_ONE_BUFFER:
        s = d = d != NULL ? d : s;
        break;
    case GX_LAYOUT_SRC_IN_DST:
        s = d + (size_t)rank * (size_t)size_src;
        break;
    case GX_LAYOUT_COPY_IN:
        memcpy(own, d, (size_t)size_src);
        s = own;
        if (dst_shift) {
            d += (size_t)rank * (size_t)size_dst;
        }
        break;
    }
    *in  = s;
    *out = d;
}

#endif
