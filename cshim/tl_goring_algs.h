/*
 * tl_goring_algs.h: goring's algorithms per collective as UCC lists them
 * (ucc_info -A) and selects them (UCC_TL_GORING_TUNE=allreduce:0-inf:@lane).
 * Generated from sched's registry and checked against it by
 *     go test -tags ucc ./ucc_tl_goring -run AlgTable [-update-algs]
 * so do not edit it by hand. X(coll, id, name, description); ids follow the
 * names' order in this build, so name algorithms, not ids, in a TUNE string.
 */
#ifndef TL_GORING_ALGS_H_
#define TL_GORING_ALGS_H_

#define GORING_ALGS_ALLGATHER(X) \
    X(allgather, 0, bruck, "Bruck: ceil(log2 P) rounds with distances 1, 2, 4, ..., any rank count") \
    X(allgather, 1, leader, "rank 0 gathers every block and returns the whole result; one GPU: rank 0 does every rank's copies") \
    X(allgather, 2, multiwrite, "relay multicast: one copy per remote node over the same-index rail, replicated inside the node; direct writes in the node") \
    X(allgather, 3, neighbor, "neighbor exchange: P/2 rounds with alternating neighbours (even rank counts)") \
    X(allgather, 4, parallel_rings, "hierarchical: intra-node exchange, one inter-node ring per local rank/rail, overlapped redistribution (--intra selects the intra-node phase)") \
    X(allgather, 5, recursive_doubling, "recursive doubling: log2 P rounds of doubling exchanges (power-of-two ranks)") \
    X(allgather, 6, ring, "flat ring in rank order, P-1 lock-stepped rounds (Open MPI / UCC tl/ucp baseline)")

#define GORING_ALGS_ALLREDUCE(X) \
    X(allreduce, 0, lane, "multi-lane: intra-node reduce-scatter, ring allreduce per lane across nodes, intra-node allgather") \
    X(allreduce, 1, leader, "rank 0 reduces all vectors in rank order and returns the result; one GPU: rank 0 does every rank's device work") \
    X(allreduce, 2, parallel_rings, "reduce-scatter then allgather, both as parallel rings (one inter-node ring per local rank/rail)") \
    X(allreduce, 3, rabenseifner, "recursive-halving reduce-scatter + recursive-doubling allgather; non-powers of two fold pairs first") \
    X(allreduce, 4, recursive_doubling, "log2 P exchanges of the whole vector with rank^2^k; non-powers of two fold pairs first") \
    X(allreduce, 5, ring, "ring allreduce: ring reduce-scatter then ring allgather, 2(P-1) rounds")

#define GORING_ALGS_REDUCE_SCATTER(X) \
    X(reduce_scatter, 0, leader, "rank 0 reduces every input in rank order and returns each rank its block; one GPU: rank 0 does every rank's device work") \
    X(reduce_scatter, 1, parallel_rings, "hierarchical: intra-node reduction overlapped with one inter-node ring per local rank/rail") \
    X(reduce_scatter, 2, ring, "ring reduce-scatter: P-1 lock-stepped rounds of send, receive, reduce")

#define GORING_ALGS_BCAST(X) \
    X(bcast, 0, knomial, "k-nomial tree (radix 4) from the root; pieces forwarded as they arrive") \
    X(bcast, 1, leader, "the root sends to every rank (a flat tree); one GPU: rank 0 copies the root's buffer into every rank's") \
    X(bcast, 2, multiwrite, "relay multicast from the root: one copy per remote node over the same-index rail, direct writes inside each node")

#define GORING_ALGS_ALLTOALLV(X) \
    X(alltoallv, 0, nimble, "NIMBLE: min-congestion multi-path split (2-hop NVLink relays, rail-matched paths) of every demand of 1 MiB or more") \
    X(alltoallv, 1, pairwise, "pairwise exchange: P-1 rounds, round s sends to r+s and receives from r-s")

#endif /* TL_GORING_ALGS_H_ */
