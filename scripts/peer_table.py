#!/usr/bin/env python3
"""peer_table.py: goring beside its peers, from files of one run.

Joins goring bench --json files (every algorithm), nccl_bench.py's JSON (one
peer per algorithm it names: "NCCL", and "two-shot" for --how two_shot;
", per call" added where it ran with --clock host, goring's own clock) and
ucc_perftest tables (UCC's own TLs, or tl/goring through UCC) into one
table per collective: per size, goring's best algorithm and its bus
bandwidth, then each peer's, then goring's bus bandwidth over the peer's
(ratio > 1: goring faster). Bus bandwidth as nccl-tests define it, the
same formula for every column (goring's coll.BusBytes).

    python3 scripts/peer_table.py --np 2 --goring g_allgather.json g_allreduce.json \\
        --nccl nccl.json --ucc tl/ucp:allgather=ucp_allgather.txt --ucc tl/ucp:allreduce=...
"""
import argparse
import json
import sys


# nccl_bench.py's algorithms, as the table names them.
PEER_NAMES = {"nccl": "NCCL", "symm_two_shot": "two-shot"}


def bus_bytes(coll, n, b):
    if coll == "bcast":
        return b  # the message crosses each link once
    return 2 * (n - 1) / n * b if coll == "allreduce" else (n - 1) * b


def json_rows(path):
    with open(path) as f:
        return json.load(f)["results"]


def perftest_rows(path, coll, n):
    """ucc_perftest -F rows: count, size, avg, min, max (us), bus GB/s...

    Its size is the source buffer: for reduce_scatter that is all n blocks,
    so the block (goring's bytes) is size / n."""
    rows = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 5 and p[0].isdigit() and p[1].isdigit():
                try:
                    b = int(p[1]) // n if coll == "reduce_scatter" else int(p[1])
                    rows.append({"collective": coll, "bytes": b, "avg_us": float(p[2])})
                except ValueError:
                    pass
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--np", type=int, required=True)
    ap.add_argument("--goring", nargs="*", default=[], help="goring bench --json files")
    ap.add_argument("--nccl", action="append", default=[], help="an nccl_bench.py --json file (repeatable)")
    ap.add_argument("--ucc", action="append", default=[], metavar="NAME:COLL=FILE",
                    help="a ucc_perftest table, e.g. tl/ucp:allgather=ucp_allgather.txt")
    ap.add_argument("--json", action="store_true", help="the joined rows as JSON instead of tables")
    args = ap.parse_args()

    best = {}  # (coll, bytes) -> goring's fastest row
    for path in args.goring:
        for r in json_rows(path):
            if r["algorithm"] == "auto" and r.get("ran"):
                r["algorithm"] = "auto:" + r["ran"]  # the team layer's own choice, named
            k = (r["collective"], r["bytes"])
            if k not in best or r["avg_us"] < best[k]["avg_us"]:
                best[k] = r
    if not best:
        sys.exit("peer_table: no goring rows")
    peers = {}  # name -> {(coll, bytes): us}
    for path in args.nccl:
        for r in json_rows(path):
            name = PEER_NAMES.get(r["algorithm"], r["algorithm"])
            if r.get("clock") == "host":  # timed per call, as goring's rows are
                name += ", per call"
            peers.setdefault(name, {})[(r["collective"], r["bytes"])] = r["avg_us"]
    for spec in args.ucc:
        try:
            name, rest = spec.split(":", 1)
            coll, path = rest.split("=", 1)
        except ValueError:
            sys.exit(f"peer_table: --ucc {spec!r}: want NAME:COLL=FILE")
        for r in perftest_rows(path, coll, args.np):
            peers.setdefault(name, {})[(coll, r["bytes"])] = r["avg_us"]

    n, out = args.np, []
    for coll in ("allgather", "allreduce", "reduce_scatter", "bcast", "alltoallv"):
        keys = sorted(b for c, b in best if c == coll)
        if not keys:
            continue
        names = [p for p in peers if any(c == coll for c, _ in peers[p])]
        if not args.json:
            print(f"\n{coll}, {n} ranks (bytes in UCC's meaning; bus GB/s; ratio = goring's bus bandwidth / the peer's)")
            head = f"{'bytes':>11} {'goring best':>24} {'us':>9} {'GB/s':>7}"
            for p in names:
                head += f" {p + ' us':>11} {'GB/s':>7} {'ratio':>6}"
            print(head)
        for b in keys:
            g = best[(coll, b)]
            gbw = bus_bytes(coll, n, b) / (g["avg_us"] * 1e3)
            row = {"collective": coll, "bytes": b, "goring_alg": g["algorithm"], "goring_us": g["avg_us"],
                   "goring_busbw_GBps": gbw, "peers": {}}
            line = f"{b:>11} {g['algorithm'][:24]:>24} {g['avg_us']:9.1f} {gbw:7.1f}"
            for p in names:
                us = peers[p].get((coll, b))
                if us is None:
                    line += f" {'-':>11} {'-':>7} {'-':>6}"
                    continue
                pbw = bus_bytes(coll, n, b) / (us * 1e3)
                row["peers"][p] = {"us": us, "busbw_GBps": pbw, "ratio": gbw / pbw}
                line += f" {us:11.1f} {pbw:7.1f} {gbw / pbw:6.2f}"
            out.append(row)
            if not args.json:
                print(line)
    if args.json:
        json.dump({"rows": out}, sys.stdout, indent=2)
        print()


if __name__ == "__main__":
    main()
