#!/usr/bin/env python3
"""nccl_bench.py: the NCCL baseline of goring's GPU tables.

NCCL's allgather, allreduce and reduce_scatter through torch.distributed,
one process per GPU (the machine's python3 holds PyTorch; nothing else is
needed), on float32 CUDA tensors, sizes in goring bench's meaning (UCC's):
allgather bytes per rank, allreduce the vector, reduce_scatter each rank's
output block. Each size is checked once (every element compared on every
rank), then timed the way nccl-tests time it: the iterations issued back to
back on the stream between two CUDA events, the elapsed time divided by
their number. That is the kindest clock for NCCL (launch latency overlaps
the previous call); goring's rows wait for each call, so a ratio against
this baseline errs against goring. Rows are printed in goring bench's JSON
schema (algorithm "nccl") for scripts/peer_table.py:

    NCCL_NVLS_ENABLE=0 python3 scripts/nccl_bench.py --np 2 --bytes 4MiB:256MiB --json

With --rank R (and --addr, rank 0's address) it runs one rank of --np
and leaves the launching to the caller: scripts/device_netns.sh starts
each rank in its node's network namespace.
"""
import argparse
import json
import os
import sys

UNITS = {"": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def parse_bytes(s):
    for u in ("GiB", "MiB", "KiB", "B"):
        if s.endswith(u):
            return int(s[: -len(u)]) * UNITS[u]
    return int(s)


def sizes(spec):
    """'4MiB:256MiB' doubles from the first to the last; '1,2MiB' lists."""
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
        if b <= 0 or b % 4:
            sys.exit(f"nccl_bench: {b} bytes is not a whole number of float32 elements")
    return out


def bus_bytes(coll, n, b):
    # The same definition as goring's coll.BusBytes (nccl-tests').
    return 2 * (n - 1) / n * b if coll == "allreduce" else (n - 1) * b


def one_size(dist, torch, coll, n, rank, b, iters, warmup):
    dev = torch.device("cuda", torch.cuda.current_device())
    e = b // 4
    if coll == "allgather":
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
    if coll == "allreduce":
        buf.fill_(rank + 1)
    elif coll == "reduce_scatter":
        src.fill_(rank + 1)
    op()
    torch.cuda.synchronize()
    ok = bool(torch.equal(got(), want))
    return timed(dist, torch, op, n, iters, warmup, ok)


def timed(dist, torch, op, n, iters, warmup, ok):
    """op's mean µs over iters back-to-back calls after warmup (CUDA
    events around the whole loop), and each rank's (µs, ok), on every rank."""
    for _ in range(warmup):
        op()
    torch.cuda.synchronize()
    dist.barrier()
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
    for coll in args.colls.split(","):
        for b in sizes(args.bytes):
            per = one_size(dist, torch, coll, n, rank, b, args.iters, args.warmup)
            us = [p[0] for p in per]
            avg = sum(us) / n
            rows.append({"collective": coll, "algorithm": "nccl", "bytes": b, "avg_us": avg,
                         "min_us": min(us), "max_us": max(us), "iterations": args.iters,
                         "busbw_GBps": bus_bytes(coll, n, b) / (avg * 1e3),
                         "validated": all(p[1] for p in per), "mem": "cuda"})
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
    # One rank per command, for ranks another launcher starts (one per
    # network namespace: scripts/device_netns.sh); rank 0 prints the rows.
    ap.add_argument("--rank", type=int, default=-1, help="run this one rank of --np (default: spawn every rank here)")
    ap.add_argument("--addr", default="127.0.0.1", help="rank 0's address for the rendezvous (with --rank)")
    args = ap.parse_args()
    for c in args.colls.split(","):
        if c not in ("allgather", "allreduce", "reduce_scatter"):
            sys.exit(f"nccl_bench: unknown collective {c!r} (allgather, allreduce, reduce_scatter)")
    sizes(args.bytes)
    if args.rank >= 0 and not 0 <= args.rank < args.np:
        sys.exit(f"nccl_bench: --rank {args.rank} out of range for --np {args.np} (--rank needs --np)")
    if os.environ.get("NCCL_NVLS_ENABLE") != "0":
        sys.exit("nccl_bench: set NCCL_NVLS_ENABLE=0 (NVLink multicast stays off on shared machines)")
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
        sys.exit("nccl_bench: NCCL returned wrong contents (rows with validated: false)")


if __name__ == "__main__":
    main()
