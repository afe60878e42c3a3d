#!/usr/bin/env python3
"""A bf16 GEMM beside collectives: how much of its speed a collective leaves it.

Two modes, both run by scripts/device_beside.sh on a GPU machine:

  gemm_beside.py gemm --gpu I --log FILE --ctl DIR
      One process per GPU that multiplies two 8192x8192 bf16 matrices in a
      loop and appends "wall_seconds tflops" for every batch of products to
      FILE. It idles while DIR/pause exists and ends when DIR/stop appears, so
      that the collectives of another process (ucc_perftest through a UCC
      layer) can run beside it, or alone, without restarting it.

  gemm_beside.py torch --np N --coll allgather|allreduce --bytes B --seconds S --how nccl|symm
      The collective from PyTorch in the same process as the GEMM, on a
      stream of its own: NCCL (torch.distributed) or, for allgather,
      PyTorch's copy-engine symmetric-memory allgather. Prints one line
      per rank 0: the collective's mean time alone and beside the GEMM, and
      the GEMM's speed alone and beside it.

Why both: goring runs in the UCC process (ucc_perftest), the GEMM in another
process on the same GPU; the in-process PyTorch rows are how a framework
would overlap, and the same-process NCCL row beside the separate-process
tl/nccl row says what the process boundary costs.
"""
import argparse
import os
import sys
import time

N = 8192  # the GEMM's edge: 2*N^3 flops a product
BATCH = 8  # products between two timestamps


def gemm_proc(a):
    import torch

    torch.cuda.set_device(a.gpu)
    x = torch.randn(N, N, dtype=torch.bfloat16, device="cuda")
    y = torch.randn(N, N, dtype=torch.bfloat16, device="cuda")
    for _ in range(3):
        x @ y
    torch.cuda.synchronize()
    open(os.path.join(a.ctl, f"ready{a.gpu}"), "w").close()
    stop, pause = os.path.join(a.ctl, "stop"), os.path.join(a.ctl, "pause")
    with open(a.log, "w", buffering=1) as log:
        while not os.path.exists(stop):
            if os.path.exists(pause):
                time.sleep(0.01)
                continue
            t0 = time.time()
            for _ in range(BATCH):
                x @ y
            torch.cuda.synchronize()
            t1 = time.time()
            log.write(f"{t1:.6f} {2 * N**3 * BATCH / (t1 - t0) / 1e12:.1f}\n")


def torch_rank(rank, a):
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(rank)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29571")
    dist.init_process_group("nccl", rank=rank, world_size=a.np, device_id=torch.device("cuda", rank))
    n = a.bytes // 2  # bf16 elements a rank
    if a.how == "symm":
        import torch.distributed._symmetric_memory as symm_mem

        inp = symm_mem.empty(n, dtype=torch.bfloat16, device="cuda")
        symm_mem.rendezvous(inp, dist.group.WORLD.group_name)
        inp.fill_(rank)

        def coll():
            return torch.ops.symm_mem._low_contention_all_gather(inp, dist.group.WORLD.group_name)
    else:
        inp = torch.full((n,), float(rank), dtype=torch.bfloat16, device="cuda")
        out = torch.empty(n * a.np, dtype=torch.bfloat16, device="cuda")

        def coll():
            if a.coll == "allgather":
                dist.all_gather_into_tensor(out, inp)
                return out
            dist.all_reduce(inp)
            return inp

    x = torch.randn(N, N, dtype=torch.bfloat16, device="cuda")
    y = torch.randn(N, N, dtype=torch.bfloat16, device="cuda")
    cs, gs = torch.cuda.Stream(), torch.cuda.Stream()

    def run(calls, with_gemm, seconds=0.0):
        """calls collectives (the same number on every rank: each is a
        rendezvous) with the GEMM kept queued beside them while they last,
        or the GEMM alone for seconds: (coll ms, gemm TFLOP/s)."""
        ct, gt, cq, gq = [], [], [], []
        dist.barrier()
        end, issued = time.time() + seconds, 0
        while issued < calls or cq or (calls == 0 and time.time() < end):
            if issued < calls and len(cq) < 2:
                with torch.cuda.stream(cs):
                    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    e0.record()
                    coll()
                    e1.record()
                cq.append((e0, e1))
                issued += 1
            if with_gemm and len(gq) < 2 and (issued < calls or cq or calls == 0):
                with torch.cuda.stream(gs):
                    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    e0.record()
                    for _ in range(BATCH):
                        x @ y
                    e1.record()
                gq.append((e0, e1))
            for q, t in ((cq, ct), (gq, gt)):
                while q and q[0][1].query():
                    e0, e1 = q.pop(0)
                    t.append(e0.elapsed_time(e1))
            time.sleep(0.0002)
        torch.cuda.synchronize()
        gt.extend(e0.elapsed_time(e1) for e0, e1 in gq)
        # A collective's time on its own stream includes the wait for its
        # peers; the mean over many calls is what the caller sees. The
        # first of each is dropped (a queue filling).
        cm = sum(ct[1:]) / max(len(ct) - 1, 1) if ct else 0.0
        gf = 2 * N**3 * BATCH / (sum(gt[1:]) / max(len(gt) - 1, 1) / 1e3) / 1e12 if len(gt) > 1 else 0.0
        return cm, gf

    # Whether the copy-engine allgather's result is right, once.
    if a.how == "symm" or a.coll == "allgather":
        got = coll().view(a.np, n)[:, :: max(n // 4, 1)].float()
        want = torch.arange(a.np, device="cuda", dtype=torch.float32).view(a.np, 1).expand_as(got)
        ok = bool(torch.equal(got, want))
    else:
        ok = True
    run(3, True)  # warm-up of both
    # As many calls as fill the time alone, agreed by all ranks.
    probe, _ = run(5, False)
    k = torch.tensor([max(10, int(a.seconds * 1e3 / max(probe, 1e-3)))], device="cuda")
    dist.all_reduce(k, op=dist.ReduceOp.MIN)
    calls = int(k.item())
    alone_c, _ = run(calls, False)
    _, alone_g = run(0, True, a.seconds)
    bes_c, bes_g = run(calls, True)
    if rank == 0:
        print(
            f"torch {a.how:5} {a.coll:10} {a.bytes:>10} B/rank: coll alone {alone_c * 1e3:9.1f} us, beside {bes_c * 1e3:9.1f} us "
            f"({bes_c / alone_c if alone_c else 0:.2f}x); gemm alone {alone_g:6.1f} TFLOP/s, beside {bes_g:6.1f} "
            f"({100 * bes_g / alone_g if alone_g else 0:.0f}%); contents {'ok' if ok else 'WRONG'}",
            flush=True,
        )
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="mode", required=True)
    g = sub.add_parser("gemm")
    g.add_argument("--gpu", type=int, required=True)
    g.add_argument("--log", required=True)
    g.add_argument("--ctl", required=True)
    t = sub.add_parser("torch")
    t.add_argument("--np", type=int, default=4)
    t.add_argument("--coll", choices=["allgather", "allreduce"], required=True)
    t.add_argument("--bytes", type=int, required=True)
    t.add_argument("--seconds", type=float, default=3.0)
    t.add_argument("--how", choices=["nccl", "symm"], default="nccl")
    a = p.parse_args()
    if a.mode == "gemm":
        gemm_proc(a)
        return
    # NVLink multicast can put a shared machine's GPUs out of service.
    for v, want in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")):
        if os.environ.get(v) != want:
            sys.exit(f"gemm_beside: set {v}={want} (no NVLink multicast)")
    if a.how == "symm" and a.coll != "allgather":
        sys.exit("gemm_beside: the copy-engine symmetric-memory path is an allgather")
    if a.bytes <= 0 or a.bytes % 2:
        sys.exit(f"gemm_beside: --bytes {a.bytes} is not a whole number of bf16 elements")
    import torch.multiprocessing as mp

    mp.spawn(torch_rank, args=(a,), nprocs=a.np)


if __name__ == "__main__":
    main()
