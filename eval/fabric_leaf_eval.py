#!/usr/bin/env python3
"""fabric_leaf_eval.py: how often a fabric finding with no topology names the faulty
cable's leaf from the packets' hop counts (docs/localization.md, "Which leaf, from the
TTLs"; issue #17 item 4).

Per seed: agentxdp-synth slows one leaf-spine cable (drawn from the seed) 5x, and
agentxdp-analyze judges the trace with no option but --json. The first fabric finding's
evidence.leaf_groups is scored against links.csv: the leaf named holds only hosts of the
cable's leaf (right) or not (wrong); two host sets offered (one of them the leaf, or
neither); no leaf claimed; no fabric finding at all.

Usage: eval/fabric_leaf_eval.py [--seeds N] [--first-seed N] [--bin DIR] [-- SYNTH OPTIONS]
e.g.   eval/fabric_leaf_eval.py --seeds 30 -- --hosts 32 --leaves 8 --spines 4
"""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import tempfile

KINDS = ["named right", "named WRONG", "two sets, one the leaf", "two sets, neither",
         "no leaf claimed", "no fabric finding", "failed"]


def expand(text):
    """'198.18.0.10..13, 198.18.0.20' -> the set of addresses ('...' ignored)."""
    out = set()
    for part in text.split(", "):
        m = re.fullmatch(r"(\d+\.\d+\.\d+\.)(\d+)\.\.(\d+)", part)
        if m:
            out.update("%s%d" % (m.group(1), i) for i in range(int(m.group(2)), int(m.group(3)) + 1))
        elif part != "...":
            out.add(part)
    return out


def option(synth_args, name, default):
    return int(synth_args[synth_args.index(name) + 1]) if name in synth_args else default


def one_run(args, seed, work):
    rnd = random.Random(seed)
    leaves, spines = option(args.synth, "--leaves", 4), option(args.synth, "--spines", 2)
    link = "leaf%d-spine%d" % (rnd.randrange(leaves), rnd.randrange(spines))
    base = ["--hosts", "16", "--leaves", "4", "--spines", "2", "--duration", "10ms", "--load", "10%"]
    cmd = [os.path.join(args.bin, "agentxdp-synth"), "-q", "-o", work] + base + args.synth + \
        ["--seed", str(seed), "--fault", "link=%s,kind=slow,size=5x" % link]
    if subprocess.run(cmd, stderr=subprocess.DEVNULL).returncode:
        return "failed"
    traces = sorted(os.path.join(work, f) for f in os.listdir(work) if f.endswith(".pcapng"))
    res = subprocess.run([os.path.join(args.bin, "agentxdp-analyze"), "-q"] + traces + ["--json"],
                         capture_output=True, text=True)
    if res.returncode:
        return "failed"
    fabric = [f for f in json.loads(res.stdout).get("findings", []) if f["subject_kind"] == "fabric"]
    if not fabric:
        return "no fabric finding"
    leaf = link.split("-")[0]
    with open(os.path.join(work, "links.csv")) as f:
        hosts = {row.split(",")[1] for row in f if row.strip().split(",")[2] == leaf}
    sets = fabric[0]["evidence"].get("leaf_groups", {}).get("hurt_pairs_leave", [])
    if len(sets) == 1:
        return "named right" if expand(sets[0]) <= hosts else "named WRONG"
    if len(sets) == 2:
        return "two sets, one the leaf" if any(expand(s) <= hosts for s in sets) else "two sets, neither"
    return "no leaf claimed"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=30)
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--bin", default="bin")
    ap.add_argument("synth", nargs="*", help="more agentxdp-synth options (after --)")
    args = ap.parse_args()
    tally = dict.fromkeys(KINDS, 0)
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        work = tempfile.mkdtemp(prefix="agentxdp-leaf.")
        try:
            tally[one_run(args, seed, work)] += 1
        finally:
            shutil.rmtree(work, ignore_errors=True)
    print("| %s | %s |" % (" ".join(args.synth) or "16/4/2, mirror",
                           " | ".join(str(tally[k]) for k in KINDS)))


if __name__ == "__main__":
    main()
