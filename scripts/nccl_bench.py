#!/usr/bin/env python3
"""nccl_bench.py: the NCCL baseline of goring's GPU tables.

NCCL's allgather, allreduce and reduce_scatter through torch.distributed,
one process per GPU (the machine's python3 holds PyTorch; nothing else is
needed), on float32 CUDA tensors, sizes in goring bench's meaning (UCC's):
allgather bytes per rank, allreduce the vector, reduce_scatter each rank's
output block. alltoallv is all_to_all_single on uint8 tensors with goring
bench's byte matrix: BYTES to every rank (itself included), or with
--hot R:F bench.HotCounts's (rank R receives fraction F of every rank's
n*BYTES, the rest spread evenly, remainders to the lowest ranks);
--print-counts prints those matrices as JSON and needs no PyTorch.
With --how two_shot the allreduce rows are PyTorch's own load/store
kernel over symmetric memory instead (torch.ops.symm_mem.two_shot_all_reduce_,
algorithm "symm_two_shot"; TORCH_SYMM_MEM_DISABLE_MULTICAST=1: it runs
without NVLink multicast), the peer the node kernels are held to below
16 MiB.
Each size is checked once (every element compared on every rank; for
alltoallv every byte carries its sender, receiver and index), then timed
the way nccl-tests time it: the iterations issued back to back on the
stream between two CUDA events, the elapsed time divided by their number.
That is the kindest clock for NCCL (launch latency overlaps the previous
call); goring's rows wait for each call, so a ratio against this baseline
errs against goring. With --clock host each call is timed as goring
bench times its own, an MPI user's blocking call: the host's clock from
the call to the end of its GPU work (torch.cuda.synchronize), the mean
over the iterations; the rows then carry "clock": "host", and
peer_table.py names such a peer apart ("NCCL, per call"). Rows are
printed in goring bench's JSON schema (algorithm "nccl") for
scripts/peer_table.py:

    NCCL_NVLS_ENABLE=0 python3 scripts/nccl_bench.py --np 2 --bytes 4MiB:256MiB --json

With --rank R (and --addr, rank 0's address) it runs one rank of --np
and leaves the launching to the caller: scripts/device_netns.sh starts
each rank in its node's network namespace.
"""
import argparse
import json
import os
import re
import sys
import time

UNITS = {"": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def parse_bytes(s):
    for u in ("GiB", "MiB", "KiB", "B"):
        if s.endswith(u):
            return int(s[: -len(u)]) * UNITS[u]
    return int(s)


def sizes(spec, whole=True):
    """'4MiB:256MiB' doubles from the first to the last; '1,2MiB' lists.
    whole: every size must be whole float32 elements (alltoallv moves
    bytes and takes any)."""
    out = []
    for part in spec.split(","):
        if ":" in part:
            lo, hi = (parse_bytes(x) for x in part.split(":"))
            while lo <= hi:
                out.append(lo)
                lo *= 2
        else:
            out.append(parse_bytes(part))
    for b in out:
        if b <= 0:
            sys.exit(f"nccl_bench: {b} bytes: want a positive size")
        if whole and b % 4:
            sys.exit(f"nccl_bench: {b} bytes is not a whole number of float32 elements")
    return out


def parse_hot(spec):
    """--hot 'R:F' as (R, F), or None for ''."""
    if not spec:
        return None
    rs, sep, fs = spec.partition(":")
    try:
        if not sep or not re.fullmatch(r"[+-]?[0-9]+", rs):
            raise ValueError
        return int(rs), float(fs)
    except ValueError:
        sys.exit(f"nccl_bench: --hot {spec!r}: want RANK:FRACTION, e.g. 0:0.5")


def hot_counts(n, b, hot, frac):
    """goring's bench.HotCounts, entry for entry: counts[i][j] is the
    bytes rank i sends rank j; rank hot receives int(frac * n*b) of every
    row, the rest goes evenly to the other ranks, the remainder one byte
    each to the lowest of them, so that each row keeps n*b."""
    if not 0 <= hot < n:
        sys.exit(f"nccl_bench: --hot {hot}:{frac:g}: rank out of range [0,{n})")
    if not 0 <= frac <= 1:  # NaN fails too, as in Go
        sys.exit(f"nccl_bench: --hot {hot}:{frac:g}: fraction must be in [0,1]")
    total = n * b
    m = []
    for _ in range(n):
        row = [0] * n
        # Go's int64(frac * float64(total)): the same IEEE product, truncated.
        to_hot = total if n == 1 else int(frac * float(total))
        row[hot] = to_hot
        rest = total - to_hot
        others = n - 1
        k = 0
        for j in range(n):
            if j == hot:
                continue
            row[j] = rest // others + (1 if k < rest % others else 0)
            k += 1
        m.append(row)
    return m


def counts(n, b, hot):
    """alltoallv's byte matrix for size b: goring bench's, uniform (b to
    every rank) without --hot, bench.HotCounts with it."""
    if hot is None:
        return [[b] * n for _ in range(n)]
    return hot_counts(n, b, *hot)


def bus_bytes(coll, n, b, m=None):
    # The same definition as goring's coll.BusBytes (nccl-tests'); for
    # alltoallv the bytes that leave their rank, per rank.
    if coll == "alltoallv":
        return sum(v for i, row in enumerate(m) for j, v in enumerate(row) if i != j) / n
    return 2 * (n - 1) / n * b if coll == "allreduce" else (n - 1) * b


def pattern_ramp(torch, dev, length):
    """uint8 values (k % 251) for k < length + 251: block (src, dst) of
    alltoallv is the slice from offset(src, dst), so that every byte
    depends on its sender, its receiver and its index."""
    return torch.arange(251, dtype=torch.uint8, device=dev).repeat(length // 251 + 2)


def offset(src, dst):
    return (7 * src + 13 * dst + 1) % 251


def one_alltoallv(dist, torch, n, rank, b, hot, iters, warmup, clock="events"):
    dev = torch.device("cuda", torch.cuda.current_device())
    m = counts(n, b, hot)
    send = m[rank]
    recv = [m[i][rank] for i in range(n)]
    ramp = pattern_ramp(torch, dev, max(max(send), max(recv)))
    src = torch.cat([ramp[offset(rank, j):offset(rank, j) + send[j]] for j in range(n)])
    want = torch.cat([ramp[offset(i, rank):offset(i, rank) + recv[i]] for i in range(n)])
    del ramp
    dst = torch.zeros(sum(recv), dtype=torch.uint8, device=dev)
    op = lambda: dist.all_to_all_single(dst, src, output_split_sizes=recv, input_split_sizes=send)
    op()
    torch.cuda.synchronize()
    ok = bool(torch.equal(dst, want))
    del want
    return timed(dist, torch, op, n, iters, warmup, ok, clock), m


def one_size(dist, torch, coll, n, rank, b, iters, warmup, how="nccl", clock="events"):
    dev = torch.device("cuda", torch.cuda.current_device())
    e = b // 4
    if how == "two_shot":
        # The buffer must be symmetric memory, exchanged once; the kernel
        # reduces it in place.
        import torch.distributed._symmetric_memory as symm_mem
        group = dist.group.WORLD.group_name
        buf = symm_mem.empty(e, dtype=torch.float32, device=dev)
        symm_mem.rendezvous(buf, group)
        op = lambda: torch.ops.symm_mem.two_shot_all_reduce_(buf, "sum", group)
        want = torch.full((e,), float(n * (n + 1) // 2), device=dev)
        got = lambda: buf
    elif coll == "allgather":
        src = torch.full((e,), float(rank + 1), device=dev)
        dst = torch.empty(e * n, device=dev)
        op = lambda: dist.all_gather_into_tensor(dst, src)
        want = torch.arange(1, n + 1, device=dev, dtype=torch.float32).repeat_interleave(e)
        got = lambda: dst
    elif coll == "allreduce":
        buf = torch.empty(e, device=dev)
        op = lambda: dist.all_reduce(buf)
        want = torch.full((e,), float(n * (n + 1) // 2), device=dev)
        got = lambda: buf
    else:
        src = torch.empty(e * n, device=dev)
        dst = torch.empty(e, device=dev)
        op = lambda: dist.reduce_scatter_tensor(dst, src)
        want = torch.full((e,), float(n * (n + 1) // 2), device=dev)
        got = lambda: dst
    # Check once with fresh inputs (allreduce works in place).
    if coll == "allreduce":  # two_shot too
        buf.fill_(rank + 1)
    elif coll == "reduce_scatter":
        src.fill_(rank + 1)
    op()
    torch.cuda.synchronize()
    ok = bool(torch.equal(got(), want))
    return timed(dist, torch, op, n, iters, warmup, ok, clock)


def timed(dist, torch, op, n, iters, warmup, ok, clock="events"):
    """op's mean µs after warmup, and each rank's (µs, ok), on every rank:
    clock "events", iters back-to-back calls between two CUDA events;
    "host", each call from its start on the host to the end of its GPU
    work, as a blocking MPI call is timed."""
    for _ in range(warmup):
        op()
    torch.cuda.synchronize()
    dist.barrier()
    if clock == "host":
        total = 0.0
        for _ in range(iters):
            t = time.perf_counter()
            op()
            torch.cuda.synchronize()
            total += time.perf_counter() - t
        us = total * 1e6 / iters
    else:
        t0, t1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t0.record()
        for _ in range(iters):
            op()
        t1.record()
        torch.cuda.synchronize()
        us = t0.elapsed_time(t1) * 1e3 / iters
    per = [None] * n
    dist.all_gather_object(per, (us, ok))
    return per


def worker(rank, n, args, q):
    rows = run_rank(rank, n, args)
    if rank == 0:
        q.put(rows)


def run_rank(rank, n, args):
    """One rank's rows (rank 0's are the table); GPU rank % GPUs."""
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(rank % torch.cuda.device_count())
    dist.init_process_group("nccl", init_method=f"tcp://{args.addr}:{args.port}", rank=rank, world_size=n,
                            device_id=torch.device("cuda", torch.cuda.current_device()))
    rows = []
    hot = parse_hot(args.hot)
    for coll in args.colls.split(","):
        for b in sizes(args.bytes, coll != "alltoallv"):
            m = None
            if coll == "alltoallv":
                per, m = one_alltoallv(dist, torch, n, rank, b, hot, args.iters, args.warmup, args.clock)
            else:
                per = one_size(dist, torch, coll, n, rank, b, args.iters, args.warmup, args.how, args.clock)
            us = [p[0] for p in per]
            avg = sum(us) / n
            alg = "symm_two_shot" if args.how == "two_shot" else "nccl"
            rows.append({"collective": coll, "algorithm": alg, "bytes": b, "avg_us": avg,
                         "min_us": min(us), "max_us": max(us), "iterations": args.iters,
                         "busbw_GBps": bus_bytes(coll, n, b, m) / (avg * 1e3),
                         "validated": all(p[1] for p in per), "mem": "cuda", "clock": args.clock})
            if rank == 0 and not args.json:
                print(f"{coll:15s} {b:>12d} {avg:12.2f} us {rows[-1]['busbw_GBps']:8.1f} GB/s"
                      f"{'' if rows[-1]['validated'] else '  WRONG CONTENTS'}", flush=True)
    dist.destroy_process_group()
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--np", type=int, default=0, help="processes, one per GPU (default: every GPU)")
    ap.add_argument("--colls", default="allgather,allreduce,reduce_scatter")
    ap.add_argument("--bytes", default="4MiB:256MiB")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--port", type=int, default=29517)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--how", default="nccl", choices=("nccl", "two_shot"),
                    help="nccl: torch.distributed's NCCL; two_shot: PyTorch's symmetric-memory two-shot allreduce")
    ap.add_argument("--clock", default="events", choices=("events", "host"),
                    help="events: back-to-back calls between CUDA events; host: each call awaited, as goring bench times")
    ap.add_argument("--hot", default="", help="alltoallv: R:F, rank R receives fraction F of every rank's traffic "
                    "(goring bench --hot); without it every rank sends --bytes to every rank")
    ap.add_argument("--print-counts", action="store_true",
                    help="print alltoallv's byte matrix of every --bytes size for --np ranks as JSON, and exit (no PyTorch)")
    # One rank per command, for ranks another launcher starts (one per
    # network namespace: scripts/device_netns.sh); rank 0 prints the rows.
    ap.add_argument("--rank", type=int, default=-1, help="run this one rank of --np (default: spawn every rank here)")
    ap.add_argument("--addr", default="127.0.0.1", help="rank 0's address for the rendezvous (with --rank)")
    args = ap.parse_args()
    colls = args.colls.split(",")
    for c in colls:
        if c not in ("allgather", "allreduce", "reduce_scatter", "alltoallv"):
            sys.exit(f"nccl_bench: unknown collective {c!r} (allgather, allreduce, reduce_scatter, alltoallv)")
    hot = parse_hot(args.hot)
    if args.how == "two_shot" and colls != ["allreduce"]:
        sys.exit("nccl_bench: --how two_shot is an allreduce: give --colls allreduce")
    if args.print_counts:
        if args.np < 1:
            sys.exit("nccl_bench: --print-counts needs --np")
        json.dump([{"bytes": b, "counts": counts(args.np, b, hot)} for b in sizes(args.bytes, False)], sys.stdout)
        print()
        return
    if hot is not None and "alltoallv" not in colls:
        sys.exit("nccl_bench: --hot applies to alltoallv only, and --colls has none")
    if hot is not None and args.np:
        counts(args.np, 1, hot)  # the rank and fraction, before any GPU
    for c in colls:
        sizes(args.bytes, c != "alltoallv")
    if args.rank >= 0 and not 0 <= args.rank < args.np:
        sys.exit(f"nccl_bench: --rank {args.rank} out of range for --np {args.np} (--rank needs --np)")
    if os.environ.get("NCCL_NVLS_ENABLE") != "0":
        sys.exit("nccl_bench: set NCCL_NVLS_ENABLE=0 (NVLink multicast stays off on shared machines)")
    if args.how == "two_shot" and os.environ.get("TORCH_SYMM_MEM_DISABLE_MULTICAST") != "1":
        sys.exit("nccl_bench: set TORCH_SYMM_MEM_DISABLE_MULTICAST=1 (NVLink multicast stays off on shared machines)")
    import torch
    import torch.multiprocessing as mp

    if not torch.cuda.is_available():
        print("nccl_bench: no CUDA device visible to PyTorch", file=sys.stderr)
        sys.exit(3)
    n = args.np or torch.cuda.device_count()
    if n < 2:
        print(f"nccl_bench: NCCL needs two processes, one per GPU; this machine has {torch.cuda.device_count()} GPU(s)",
              file=sys.stderr)
        sys.exit(3)
    if hot is not None:
        counts(n, 1, hot)
    if args.rank >= 0:
        rows = run_rank(args.rank, n, args)
        if args.rank != 0:
            return
    else:
        q = mp.get_context("spawn").SimpleQueue()
        mp.spawn(worker, args=(n, args, q), nprocs=n, join=True)
        rows = q.get()
    if args.json:
        json.dump({"results": rows}, sys.stdout, indent=2)
        print()
    if not all(r["validated"] for r in rows):
        sys.exit(f"nccl_bench: {args.how} returned wrong contents (rows with validated: false)")


if __name__ == "__main__":
    main()
