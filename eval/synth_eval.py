#!/usr/bin/env python3
"""synth_eval.py: run the localization evaluation on agentxdp-synth traces.

One process drives every run (a shell and a JSON tool per run cost more than the
synthesizer and the analyzer together): agentxdp-synth writes an incident into a
scratch directory, agentxdp-analyze --json judges it, and one line per run goes to
standard output:

    SET KIND SEED FAULT_LINK WANT TOP_SUBJECT TOP_KIND N_FINDINGS CONFIDENCE

SET  topo : the faulty link is drawn among all links; analyzed with --topology/--paths
     hosts: the faulty link is drawn among host links; analyzed without topology
KIND healthy | slow2x | slow5x | slow20x | loss0.1 | loss1 | ecn

"slow Nx" multiplies the link's whole latency contribution by N: its serializer runs N
times slower (size=Nx) and its propagation + switching latency (1 us) grows by (N-1) us.
A healthy seed is synthesized once and analyzed both ways.

Environment: SEEDS (100), FIRST_SEED (1), JOBS (2), EVAL_DURATION (10ms), EVAL_LOAD (10%),
EVAL_MTU (1024), EVAL_BIN (bin), TMPDIR. Usage: synth_eval.py [SET KIND SEED] (one run).
"""
import concurrent.futures as cf
import json
import os
import shutil
import subprocess
import sys
import tempfile

HOSTS, LEAVES, SPINES = 16, 4, 2
KINDS = ["slow2x", "slow5x", "slow20x", "loss0.1", "loss1", "ecn"]
BIN = os.environ.get("EVAL_BIN", "bin")


def links():
    per_leaf = HOSTS // LEAVES
    host_links = ["198.18.0.%d-leaf%d" % (10 + i, i // per_leaf) for i in range(HOSTS)]
    fabric = ["leaf%d-spine%d" % (l, s) for l in range(LEAVES) for s in range(SPINES)]
    return host_links, host_links + fabric


def draw(seed, salt, n):
    """Deterministic draw from the seed (Knuth multiplicative hash), as synth_one.sh did."""
    return ((seed * 2654435761 + salt * 40503) >> 7) % n


def fault_args(kind, link, onset):
    if kind == "healthy":
        return []
    if kind.startswith("slow"):
        n = int(kind[4:-1])
        return ["--fault", "link=%s,kind=slow,size=%dx,onset=%s" % (link, n, onset),
                "--fault", "link=%s,kind=slow,size=%dus,onset=%s" % (link, n - 1, onset)]
    spec = {"loss0.1": "kind=loss,size=0.1%", "loss1": "kind=loss,size=1%",
            "ecn": "kind=ecn,size=20%"}[kind]
    return ["--fault", "link=%s,%s,onset=%s" % (link, spec, onset)]


PICKS = os.environ.get("EVAL_PICKS")  # append every localization pick (analyze -vv) here


def top_finding(work, topo, tag):
    cmd = [os.path.join(BIN, "agentxdp-analyze"), "-v" if PICKS else "-q", "-v" if PICKS else "-q",
           os.path.join(work, "trace.pcapng"), "--window", "1ms", "--json"]
    if topo:
        cmd += ["--topology", os.path.join(work, "links.csv"),
                "--paths", os.path.join(work, "paths.csv")]
    r = subprocess.run(cmd, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE if PICKS else subprocess.DEVNULL)
    if PICKS:
        with open(PICKS, "a") as f:
            for line in r.stderr.decode(errors="replace").splitlines():
                if "localize:" in line:
                    f.write(tag + " " + line.split("localize: ", 1)[1] + "\n")
    if r.returncode != 0:
        return "ANALYZE-FAILED - 0 0"
    try:
        f = json.loads(r.stdout).get("findings") or []
    except ValueError:
        return "ANALYZE-FAILED - 0 0"
    if not f:
        return "none - 0 0"
    return "%s %s %d %s" % (f[0]["subject"].replace(" ", ""), f[0]["kind"], len(f),
                            f[0]["confidence"])


def run(job):
    """job = (sets, kind, seed): sets is ["topo"], ["hosts"] or both (healthy)."""
    sets, kind, seed = job
    host_links, all_links = links()
    pool = host_links if sets == ["hosts"] else all_links
    link = pool[draw(seed, 1, len(pool))]
    onset = "%dms" % draw(seed, 3, 5)
    work = tempfile.mkdtemp(prefix="agentxdp-eval.")
    lines = []
    try:
        cmd = [os.path.join(BIN, "agentxdp-synth"), "-q", "-o", work, "--hosts", str(HOSTS),
               "--leaves", str(LEAVES), "--spines", str(SPINES),
               "--duration", os.environ.get("EVAL_DURATION", "10ms"),
               "--load", os.environ.get("EVAL_LOAD", "10%"),
               "--mtu", os.environ.get("EVAL_MTU", "1024"), "--snaplen", "128",
               "--seed", str(seed)] + fault_args(kind, link, onset)
        ok = subprocess.run(cmd, stderr=subprocess.DEVNULL).returncode == 0
        for s in sets:
            shown = "-" if kind == "healthy" else link
            want = shown.split("-leaf")[0] if s == "hosts" and shown != "-" else shown
            tag = "%s %s %d %s %s" % (s, kind, seed, shown, want)
            result = top_finding(work, s == "topo", tag) if ok else "SYNTH-FAILED - 0 0"
            lines.append("%s %s" % (tag, result))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return lines


def main():
    if len(sys.argv) == 4:
        print("\n".join(run(([sys.argv[1]], sys.argv[2], int(sys.argv[3])))))
        return
    seeds = int(os.environ.get("SEEDS", "100"))
    first = int(os.environ.get("FIRST_SEED", "1"))
    jobs = int(os.environ.get("JOBS", "2"))
    todo = []
    # Seed-major order, so an interrupted run still has every row.
    for seed in range(first, first + seeds):
        for kind in KINDS:
            todo += [(["topo"], kind, seed), (["hosts"], kind, seed)]
        todo.append((["topo", "hosts"], "healthy", seed))
    with cf.ThreadPoolExecutor(max_workers=jobs) as ex:
        for lines in ex.map(run, todo):
            for line in lines:
                print(line, flush=True)


if __name__ == "__main__":
    main()
