#!/usr/bin/env python3
"""netns_table.py: goring beside NCCL on the network-namespace testbed.

Joins goring bench --json files (every algorithm of a collective) and
nccl_bench.py's JSON of the same job into one OSU-style table per
collective: per size, each goring algorithm's time, NCCL's, and goring's
best time over NCCL's (below 1: goring faster). Times are µs per call; a
cell is "-" where a run has no row.

    python3 scripts/netns_table.py --goring ag.json ar.json a2a.json --nccl nccl.json
"""
import argparse
import json


def rows(path):
    """The results of a JSON file; lines before its first "{" are skipped
    (NCCL prints its version on the standard output it shares)."""
    with open(path) as f:
        text = f.read()
    return json.loads(text[text.index("{"):])["results"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--goring", nargs="*", default=[], help="goring bench --json files")
    ap.add_argument("--nccl", help="nccl_bench.py --json file")
    args = ap.parse_args()

    goring = {}  # coll -> alg -> bytes -> row
    for p in args.goring:
        for r in rows(p):
            goring.setdefault(r["collective"], {}).setdefault(r["algorithm"], {})[r["bytes"]] = r
    nccl = {}
    if args.nccl:
        for r in rows(args.nccl):
            nccl.setdefault(r["collective"], {})[r["bytes"]] = r
    for coll, algs in goring.items():
        names = sorted(algs)
        sizes = sorted({b for a in algs.values() for b in a})
        print(f"# {coll}: us per call; goring/NCCL = goring's best time over NCCL's (<1: goring faster)")
        print(f"{'# Size(B)':>12} " + " ".join(f"{n:>16}" for n in names) + f" {'nccl':>12} {'best':>16} {'goring/NCCL':>12}")
        for b in sizes:
            cells = []
            best = None
            for n in names:
                r = algs[n].get(b)
                cells.append(f"{r['avg_us']:16.1f}" if r else f"{'-':>16}")
                if r and (best is None or r["avg_us"] < best[1]):
                    best = (n, r["avg_us"])
            nr = nccl.get(coll, {}).get(b)
            nc = f"{nr['avg_us']:12.1f}" if nr else f"{'-':>12}"
            ratio = f"{best[1] / nr['avg_us']:12.3f}" if best and nr else f"{'-':>12}"
            bn = best[0] if best else "-"
            print(f"{b:>12} " + " ".join(cells) + f" {nc} {bn:>16} {ratio}")
        print()


if __name__ == "__main__":
    main()
