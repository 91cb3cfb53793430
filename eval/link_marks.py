#!/usr/bin/env python3
"""A link's own CE-marking rate by network tomography (issue #17, round 10: a study).

usage: link_marks.py estimate DIR ANALYZE.json [--fast]  one trace: every link direction's m_l
       link_marks.py run [--cells RE] [--seeds A-B] [--out FILE] [--cnp] [--fast]
                                                     synthesize, analyze, estimate, report
       link_marks.py report FILE                     the per-cell table of a run's FILE

A CE mark is set at one queue, so a flow whose packets cross links l has a marked share
p_f = 1 - prod_l (1 - m_l), i.e. -log(1 - p_f) = sum_l x_l with x_l = -log(1 - m_l).
Over many flows with known paths (DIR/paths.csv, DIR/links.csv beside the trace) the x_l
are solved by non-negative least squares weighted by each flow's packets (cyclic
coordinate descent: exact per coordinate, no numpy or scipy needed).

What the mirror shows (docs/agentxdp-synth.8, VANTAGE POINTS): requests are stamped as they
leave the requester, so their marks are not visible; responses (ACKs, READ responses) are
stamped as they reach the requester and carry every mark of their path. So the flows used
are the responder-side ones (src = responder), p_f = ecn_ce / packets over their path from
src to dst. --cnp adds the requester-side flows with p_f = cnps / packets (a lower bound:
CNPs are rate-limited per QP). --fast (round 11) keeps only the marks the queue does not
explain: ecn_ce times 3 ce_acks_fast / ce_acks_timed (capped at 1), the analyzer's count of
marked ACKs no slower than their unmarked neighbours (a random mark is the quickest of the
three a third of the time, a queue's marked ACK almost never).

Unknowns are link directions (a queue), "A>B"; a link's figure is the larger of its two.
The run mode scores the fault's link against the other links (the analyzer and the
estimator are not told the fault; eval/matrix_eval.py's place_faults() says which it was).
"""
import csv
import json
import math
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import matrix_eval as me  # noqa: E402

ROOT = os.path.dirname(HERE)
BIN = os.environ.get("EVAL_BIN") or os.path.join(ROOT, "bin")  # EVAL_BIN: another build
# --fast: a random mark's ACK is the quickest of itself and its two unmarked neighbours a
# third of the time (ce_acks_fast / ce_acks_timed); a queue's marked ACK almost never is
FAST_FACTOR = 3.0
CELLS_DEFAULT = ("^(ecn20-fab-over|ecn30-fab-1dir|two-ecn-slow-over|rate2x-fab-over60|"
                 "healthy-over-mixed|healthy-over60|healthy-ecmp-skew|healthy-incast|"
                 "healthy-base)$")


def read_topology(wdir):
    ends = {}
    with open(os.path.join(wdir, "links.csv")) as f:
        for row in csv.DictReader(f):
            ends[row["link"]] = (row["a"], row["b"])
    paths = {}
    with open(os.path.join(wdir, "paths.csv")) as f:
        rd = csv.reader(f)
        next(rd, None)
        for row in rd:
            if len(row) >= 4:
                paths[(row[0], row[1], int(row[2]))] = row[3:]
    return ends, paths


def directed(src, links, ends):
    """The link directions 'A>B' a packet from src crosses along links (in path order)."""
    out, at = [], src
    for name in links:
        a, b = ends[name]
        if at == a:
            out.append("%s>%s" % (a, b))
            at = b
        elif at == b:
            out.append("%s>%s" % (b, a))
            at = a
        else:
            raise ValueError("path of %s breaks at %s" % (src, name))
    return out


def observations(flows, ends, paths, cnp=False, fast=False):
    """(weight, y, [link directions]) per flow: y = -log(1 - marked share)."""
    obs = []
    for f in flows:
        key = (f["src"], f["dst"], f["udp_sport"])
        n = f.get("packets") or 0
        if key not in paths or n <= 0:
            continue
        if f.get("role") == "responder" and fast:
            # the marks the queue does not explain: a queue marks the ACKs it delays, so
            # FAST_FACTOR times the fast share of the timed marked ACKs is the share of
            # the flow's marks set at random
            ce, timed = f.get("ecn_ce") or 0, f.get("ce_acks_timed") or 0
            if ce and not timed:
                continue
            marked = ce * min(1.0, FAST_FACTOR * (f.get("ce_acks_fast") or 0) / timed) if ce else 0
        elif f.get("role") == "responder":
            marked = f.get("ecn_ce") or 0
        elif cnp:
            marked = f.get("cnps") or 0
        else:
            continue
        p = min(marked / n, 1 - 0.5 / n)  # an all-marked flow stays finite
        obs.append((float(n), -math.log(1 - p), directed(f["src"], paths[key], ends)))
    return obs


def nnls(obs, sweeps=3000, tol=1e-9):
    """min sum_f w_f (y_f - sum_{l in f} x_l)^2 over x >= 0, cyclic coordinate descent."""
    members = {}
    for i, (_, _, ls) in enumerate(obs):
        for l in ls:
            members.setdefault(l, []).append(i)
    x = {l: 0.0 for l in members}
    resid = [y for _, y, _ in obs]  # y - A x
    wsum = {l: sum(obs[i][0] for i in members[l]) for l in members}
    for _ in range(sweeps):
        moved = 0.0
        for l, idx in members.items():
            g = sum(obs[i][0] * resid[i] for i in idx) / wsum[l]
            new = max(0.0, x[l] + g)
            d = new - x[l]
            if d:
                x[l] = new
                for i in idx:
                    resid[i] -= d
                moved = max(moved, abs(d))
        if moved < tol:
            break
    return {l: 1 - math.exp(-v) for l, v in x.items()}


def link_of(direction):
    a, b = direction.split(">")
    return a, b


def estimate(wdir, analysis, cnp=False, per_link=False, fast=False):
    ends, paths = read_topology(wdir)
    obs = observations(analysis["flows"], ends, paths, cnp, fast)
    if per_link:  # both directions of a link one unknown, named as links.csv names it
        names = {}
        for name, (a, b) in ends.items():
            names["%s>%s" % (a, b)] = names["%s>%s" % (b, a)] = name
        obs = [(w, y, [names[d] for d in ds]) for w, y, ds in obs]
    return nnls(obs), len(obs)


def is_switch(node):
    return node.startswith("leaf") or node.startswith("spine")


def score(m, faults, truth=None):
    """The fault link's figure against the top other link's, per direction and per link.
    A fault's figure is its injected direction(s)' (both: the larger); others exclude every
    fault's link (both directions). 'sw' = switch links only (the busy rules' peers)."""
    def dirs_of(link, ends2):
        a, b = ends2
        return ["%s>%s" % (a, b), "%s>%s" % (b, a)]
    fault_links = set()
    for f in faults:
        if f["where"] != "node":
            fault_links.add(frozenset(f["ends"]))
    res = {}
    main = [f for f in faults if f["where"] == "fabric" and f["kind"] in ("ecn", "rate")]
    if main:
        f = main[0]
        res["fault"] = f["subject"] + (" " + f["dirs"][0] if f["dir"] == "one" else "")
        res["fault_m"] = max(m.get(d, 0.0) for d in f["dirs"])
        res["fault_rev_m"] = max(m.get(d, 0.0) for d in dirs_of(f["subject"], f["ends"])
                                 if d not in f["dirs"]) if f["dir"] == "one" else None
    others = [(v, d) for d, v in m.items() if frozenset(link_of(d)) not in fault_links]
    sw = [(v, d) for v, d in others if all(is_switch(n) for n in link_of(d))]
    res["top_other"] = max(others) if others else (0.0, "-")
    res["top_other_sw"] = max(sw) if sw else (0.0, "-")
    # a healthy run's top switch direction against the next one on another link: what a
    # "k times every other link" rule would test where there is no fault
    sw.sort(reverse=True)
    nxt = [(v, d) for v, d in sw[1:] if frozenset(link_of(d)) != frozenset(link_of(sw[0][1]))]
    res["second_sw"] = nxt[0] if nxt else (0.0, "-")
    if truth is not None:
        # the synthesizer's own count per direction (every packet, requests included):
        # what a perfect estimator would see
        tr = {l["dir"]: l["ce_marked"] / l["packets"] if l["packets"] else 0.0
              for l in truth["links"]}
        if main:
            res["fault_true"] = max(tr.get(d, 0.0) for d in main[0]["dirs"])
        res["top_other_true"] = tr.get(res["top_other"][1], 0.0)
        tro = [(v, d) for d, v in tr.items() if frozenset(link_of(d)) not in fault_links
               and all(is_switch(n) for n in link_of(d))]
        res["true_max_other_sw"] = max(tro) if tro else (0.0, "-")
    return res


def score_links(ml, faults):
    """The same on the per-link fit (one unknown for both directions of a link)."""
    fault_links = set(f["subject"] for f in faults if f["where"] != "node")
    main = [f for f in faults if f["where"] == "fabric" and f["kind"] in ("ecn", "rate")]
    res = {}
    if main:
        res["link_fault_m"] = ml.get(main[0]["subject"], 0.0)
    others = [(v, l) for l, v in ml.items() if l not in fault_links and "-leaf" not in l]
    res["link_top_other_sw"] = max(others) if others else (0.0, "-")
    return res


def run_one(cell, seed, wdir, cnp, fast=False):
    faults = me.place_faults(cell, seed)
    shutil.rmtree(wdir, ignore_errors=True)
    subprocess.run(me.synth_command(cell, seed, wdir, faults), check=True, cwd=ROOT)
    out = subprocess.run([os.path.join(BIN, "agentxdp-analyze"), "-q",
                          os.path.join(wdir, "trace.pcapng"), "--json",
                          "--topology", os.path.join(wdir, "links.csv"),
                          "--paths", os.path.join(wdir, "paths.csv")],
                         capture_output=True, text=True, cwd=ROOT)
    if out.returncode not in (0, 1, 2):
        raise RuntimeError("analyze failed: %s" % out.stderr.strip())
    analysis = json.loads(out.stdout)
    with open(os.path.join(wdir, "truth.json")) as f:
        truth = json.load(f)
    m, nobs = estimate(wdir, analysis, cnp, fast=fast)
    ml, _ = estimate(wdir, analysis, cnp, per_link=True, fast=fast)
    shutil.rmtree(wdir, ignore_errors=True)
    r = score(m, faults, truth)
    r.update(score_links(ml, faults))
    r.update(cell=cell["name"], seed=seed, flows=nobs)
    return r


def seeds_arg(text):
    a, _, b = text.partition("-")
    return range(int(a), int(b or a) + 1)


def fmt(v):
    return "-" if v is None else "%.4f" % v


def span(vals, f="%.3f"):
    return (f + "-" + f) % (min(vals), max(vals))


def report(rows):
    """Per cell: per-direction fit (fault direction vs the top other switch link direction
    and the top other link direction of any kind), the per-link fit, and the synthesizer's
    true rates; ratios are per run, min and median over the runs."""
    cells = []
    for r in rows:
        if r["cell"] not in cells:
            cells.append(r["cell"])
    print("| cell | runs | fault m_l | top other switch dir | ratio min / median | "
          "top other any dir | ratio min | per-link fit ratio min / median | "
          "true: fault / top other switch dir, ratio min |")
    print("|---|---|---|---|---|---|---|---|---|")
    for c in cells:
        rs = [r for r in rows if r["cell"] == c]
        osw = [r["top_other_sw"][0] for r in rs]
        oall = [r["top_other"][0] for r in rs]
        tro = [r["true_max_other_sw"][0] for r in rs]
        if "fault_m" not in rs[0]:
            print("| %s | %d | - | %s | - | %s | - | - | - / %s |" % (
                c, len(rs), span(osw), span(oall), span(tro)))
            continue
        ratio = lambda a, b: a / max(b, 1e-6)
        fm = [r["fault_m"] for r in rs]
        rsw = sorted(ratio(r["fault_m"], r["top_other_sw"][0]) for r in rs)
        rall = [ratio(r["fault_m"], r["top_other"][0]) for r in rs]
        rl = sorted(ratio(r["link_fault_m"], r["link_top_other_sw"][0]) for r in rs)
        rt = [ratio(r["fault_true"], r["true_max_other_sw"][0]) for r in rs]
        print("| %s | %d | %s | %s | %.2f / %.2f | %s | %.2f | %.2f / %.2f | %s / %s, %.2f |" % (
            c, len(rs), span(fm), span(osw), rsw[0], rsw[len(rsw) // 2], span(oall),
            min(rall), rl[0], rl[len(rl) // 2],
            span([r["fault_true"] for r in rs]), span(tro), min(rt)))


def main(argv):
    if len(argv) >= 3 and argv[1] == "estimate":
        with open(argv[3] if len(argv) > 3 else "/dev/stdin") as f:
            analysis = json.load(f)
        m, nobs = estimate(argv[2], analysis, "--cnp" in argv, fast="--fast" in argv)
        print("# %d flows; m_l per link direction, highest first" % nobs)
        for d, v in sorted(m.items(), key=lambda kv: -kv[1]):
            print("%-28s %.5f" % (d, v))
        return 0
    if len(argv) >= 3 and argv[1] == "report":
        with open(argv[2]) as f:
            report([json.loads(line) for line in f if line.strip()])
        return 0
    if len(argv) >= 2 and argv[1] == "run":
        opts = {"--cells": CELLS_DEFAULT, "--seeds": "1341-1380", "--out": None}
        i = 2
        while i < len(argv):
            if argv[i] in opts and i + 1 < len(argv):
                opts[argv[i]] = argv[i + 1]
                i += 2
            elif argv[i] in ("--cnp", "--fast"):
                i += 1
            else:
                print("link_marks.py: unknown option %s" % argv[i], file=sys.stderr)
                return 2
        cnp = "--cnp" in argv
        cells = [c for c in me.parse_matrix(os.path.join(HERE, "matrix.txt"))
                 if re.search(opts["--cells"], c["name"])]
        wdir = os.path.join(os.environ.get("TMPDIR", "/tmp"), "link_marks.%d" % os.getpid())
        out = open(opts["--out"], "a") if opts["--out"] else None
        rows = []
        for seed in seeds_arg(opts["--seeds"]):
            for c in cells:
                r = run_one(c, seed, wdir, cnp, "--fast" in argv)
                rows.append(r)
                line = json.dumps(r)
                print(line, flush=True)
                if out:
                    out.write(line + "\n")
                    out.flush()
        report(rows)
        return 0
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (OSError, ValueError, KeyError, json.JSONDecodeError,
            subprocess.CalledProcessError, RuntimeError) as e:
        print("link_marks.py: %s" % e, file=sys.stderr)
        sys.exit(1)
