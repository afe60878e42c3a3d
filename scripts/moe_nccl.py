#!/usr/bin/env python3
"""moe_nccl.py: NCCL's all-to-all-v beside goring's MoE dispatch and combine.

Two modes.

  run:   NCCL's torch.distributed.all_to_all_single with the counts of
         goring's unicast dispatch (one token row per token and
         destination rank) or combine (the same, transposed), read from a
         routing that `goring plan dispatch ... --routing-out FILE` wrote.
         One process per GPU; bytes move as uint8 rows (the combine
         baseline moves the rows and does not sum them, which is kind to
         NCCL). Each collective is checked once (every received block
         holds its sender's fill), then timed as nccl-tests does: the
         iterations back to back between two CUDA events. Rows are in
         goring bench's JSON schema, algorithm "nccl", bytes = tokens per
         rank (as goring's dispatch rows).

             NCCL_NVLS_ENABLE=0 python3 scripts/moe_nccl.py run --routing r.json --json

         --rank R --addr A runs rank R alone (another launcher starts the
         others, one per network namespace); rank 0 prints the rows.

  table: goring bench JSON files and NCCL's, one line per (collective,
         tokens): each goring algorithm's time and NCCL's time divided by
         it (> 1: goring is faster).

             python3 scripts/moe_nccl.py table --goring g1.json g2.json --nccl all=n1.json own=n2.json
"""
import argparse
import json
import os
import sys

from nccl_bench import timed


def pair_rows(routing):
    """rows[s][d]: tokens of rank s with at least one expert on rank d."""
    toks, k, place, exp = routing["tokens"], routing["topk"], routing["placement"], routing["experts"]
    n = len(toks)
    rows = [[0] * n for _ in range(n)]
    g = 0
    for s in range(n):
        for _ in range(toks[s]):
            for d in {place[e] for e in exp[g * k:(g + 1) * k]}:
                rows[s][d] += 1
            g += 1
    return rows


def splits(coll, rows, r):
    """(send, receive) row counts of rank r, per peer."""
    n = len(rows)
    if coll == "dispatch":
        return [rows[r][d] for d in range(n)], [rows[s][r] for s in range(n)]
    return [rows[d][r] for d in range(n)], [rows[r][s] for s in range(n)]


def fill(s, d):
    return (s * 31 + d * 7 + 1) % 251


def one(dist, torch, coll, routing, rows, rank, iters, warmup):
    dev = torch.device("cuda", torch.cuda.current_device())
    h = routing["token_bytes"]
    n = len(rows)
    send, recv = splits(coll, rows, rank)
    sb, rb = [c * h for c in send], [c * h for c in recv]
    src = torch.empty(sum(sb), dtype=torch.uint8, device=dev)
    off = 0
    for d, b in enumerate(sb):
        src[off:off + b].fill_(fill(rank, d))
        off += b
    dst = torch.empty(sum(rb), dtype=torch.uint8, device=dev)
    op = lambda: dist.all_to_all_single(dst, src, output_split_sizes=rb, input_split_sizes=sb)
    op()
    torch.cuda.synchronize()
    ok, off = True, 0
    for s, b in enumerate(rb):
        ok = ok and bool(torch.all(dst[off:off + b] == fill(s, rank)).item())
        off += b
    return timed(dist, torch, op, n, iters, warmup, ok)


def worker(rank, n, args, routing, q):
    out = run_rank(rank, n, args, routing)
    if rank == 0:
        q.put(out)


def run_rank(rank, n, args, routing):
    """One rank's rows (rank 0's are the table); GPU rank % GPUs."""
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(rank % torch.cuda.device_count())
    dist.init_process_group("nccl", init_method=f"tcp://{args.addr}:{args.port}", rank=rank, world_size=n,
                            device_id=torch.device("cuda", torch.cuda.current_device()))
    rows = pair_rows(routing)
    out = []
    for coll in args.colls.split(","):
        per = one(dist, torch, coll, routing, rows, rank, args.iters, args.warmup)
        us = [p[0] for p in per]
        out.append({"collective": coll, "algorithm": "nccl", "bytes": routing["tokens"][0],
                    "avg_us": sum(us) / n, "min_us": min(us), "max_us": max(us), "iterations": args.iters,
                    "busbw_GBps": 0.0, "validated": all(p[1] for p in per), "mem": "cuda"})
    dist.destroy_process_group()
    return out


def run(args):
    if os.environ.get("NCCL_NVLS_ENABLE") != "0":
        sys.exit("moe_nccl: set NCCL_NVLS_ENABLE=0 (NVLink multicast stays off on shared machines)")
    for c in args.colls.split(","):
        if c not in ("dispatch", "combine"):
            sys.exit(f"moe_nccl: unknown collective {c!r} (dispatch, combine)")
    with open(args.routing) as f:
        routing = json.load(f)
    n = len(routing["tokens"])
    import torch
    import torch.multiprocessing as mp

    if not torch.cuda.is_available() or torch.cuda.device_count() < 1:
        print("moe_nccl: no CUDA device visible to PyTorch", file=sys.stderr)
        sys.exit(3)
    if args.rank >= n:
        sys.exit(f"moe_nccl: --rank {args.rank} out of range for the routing's {n} ranks")
    if args.rank >= 0:
        rows = run_rank(args.rank, n, args, routing)
        if args.rank != 0:
            return
    else:
        q = mp.get_context("spawn").SimpleQueue()
        mp.spawn(worker, args=(n, args, routing, q), nprocs=n, join=True)
        rows = q.get()
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"results": rows}, f, indent=2)
    elif args.json:
        json.dump({"results": rows}, sys.stdout, indent=2)
        print()
    else:
        for r in rows:
            print(f"{r['collective']:9s} {r['bytes']:>8d} tokens/rank {r['avg_us']:12.2f} us"
                  f"{'' if r['validated'] else '  WRONG CONTENTS'}")
    if not all(r["validated"] for r in rows):
        sys.exit("moe_nccl: NCCL returned wrong contents (rows with validated: false)")


def table(args):
    def load(paths):
        out = []
        for p in paths:
            with open(p) as f:
                out += json.load(f)["results"]
        return out

    # NCCL's runs: FILE or LABEL=FILE (several, e.g. NCCL on every rail and
    # on each rank's own rail). "best" is the fastest of them for each row:
    # the ratio a speed claim is made against.
    peers = []
    for i, spec in enumerate(args.nccl):
        label, _, path = spec.rpartition("=")
        rows = load([path])
        peers.append((label or ("nccl" if len(args.nccl) == 1 else f"nccl{i}"),
                      {(r["collective"], r["bytes"]): r["avg_us"] for r in rows}))
    g = load(args.goring)
    algs = sorted({r["algorithm"] for r in g})
    print("# goring's dispatch and combine beside NCCL all_to_all_single with unicast's counts (same call)")
    print("# time in us; ratio = NCCL / goring (> 1: goring faster); 'best' against the fastest NCCL run"
          + ("" if len(peers) < 2 else ", then against each: " + ", ".join(l for l, _ in peers)))
    head = f"{'collective':10s} {'tokens':>7s}" + "".join(f" {l:>10s}" for l, _ in peers)
    for a in algs:
        head += f" {a:>12s} {'best':>6s}" + ("" if len(peers) < 2 else "".join(f" {l[:6]:>6s}" for l, _ in peers))
    print(head)
    nan = float("nan")
    for c, t in sorted({(r["collective"], r["bytes"]) for r in g}):
        times = [p.get((c, t)) for _, p in peers]
        have = [x for x in times if x]
        best = min(have) if have else None
        line = f"{c:10s} {t:>7d}" + "".join(f" {x if x is not None else nan:10.1f}" for x in times)
        for a in algs:
            us = [r["avg_us"] for r in g if (r["collective"], r["bytes"], r["algorithm"]) == (c, t, a)]
            if not us:
                line += f" {'-':>12s} {'-':>6s}" + ("" if len(peers) < 2 else f" {'-':>6s}" * len(peers))
                continue
            line += f" {us[0]:12.1f} {best / us[0] if best else nan:6.2f}"
            if len(peers) > 1:
                line += "".join(f" {x / us[0] if x else nan:6.2f}" for x in times)
        print(line)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    r = sub.add_parser("run")
    r.add_argument("--routing", required=True, help="routing JSON from goring plan ... --routing-out")
    r.add_argument("--colls", default="dispatch,combine")
    r.add_argument("--iters", type=int, default=20)
    r.add_argument("--warmup", type=int, default=5)
    r.add_argument("--port", type=int, default=29519)
    r.add_argument("--json", action="store_true")
    # NCCL_DEBUG's lines go to stdout: a file keeps the rows apart.
    r.add_argument("--out", default="", help="write the rows as JSON to this file (rank 0), not to stdout")
    # One rank per command, for ranks another launcher starts (one per
    # network namespace: scripts/device_netns_moe.sh); rank 0 prints the rows.
    r.add_argument("--rank", type=int, default=-1, help="run this one rank of the routing's (default: spawn every rank here)")
    r.add_argument("--addr", default="127.0.0.1", help="rank 0's address for the rendezvous")
    t = sub.add_parser("table")
    t.add_argument("--goring", nargs="+", required=True)
    t.add_argument("--nccl", nargs="*", default=[], help="NCCL's rows, FILE or LABEL=FILE each (none: goring's alone, ratios nan)")
    args = ap.parse_args()
    run(args) if args.mode == "run" else table(args)


if __name__ == "__main__":
    main()
