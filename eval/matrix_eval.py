#!/usr/bin/env python3
"""matrix_eval.py: localization accuracy over a matrix of fabrics, loads, workloads,
vantages and faults (docs/evaluation.md).

For every cell of eval/matrix.txt and every seed: agentxdp-synth writes an incident into
a scratch directory, agentxdp-analyze judges it with default options, the way a user
types it (`trace.pcapng --json`, and `--topology links.csv --paths paths.csv --json`;
with the each-host vantage every per-host trace is passed as its own argument), and every
finding is scored against truth.json. One line per (run, mode) goes to the raw file:

    cell=C seed=N mode=topo|hosts|blind target=yes|no status=ok healthy=0 faults=1 seen=1
    named=1 top1=1 top3=1 alerts=2 right=1 kind_ok=1 notices=0 notices_right=0
    | fault ... | [right] slow 198.18.0.12-leaf0 (fabric -> 198.18.0.12) 0.830 ; [wrong] ...

the key=value part is what the table is computed from; after the first ' | ' come the
faults and the findings for people. mode topo: analyzed with links.csv + paths.csv;
hosts: analyzed without topology, healthy cells and cells whose faults are all on host
links or hosts; blind: the cells with a leaf-spine cable fault analyzed without topology,
where no finding can name the cable and a `fabric` finding whose connections cross it
is the right answer (crosses()).

Usage:
  matrix_eval.py run      run the matrix (environment below), append raw lines, print table
  matrix_eval.py table F  print the table of raw file F again (no run)
  matrix_eval.py list     print the cells and their estimated packets per run
  matrix_eval.py evidence DIR [CELLS [KEYS]]
                          one line per finding of the JSON kept in DIR (EVAL_JSON_DIR):
                          right/wrong/healthy as the table scores it, its level, kind,
                          subject, signal and the evidence KEYS (comma-separated, default
                          EVIDENCE_KEYS), for cells matching the regular expression CELLS

Environment: SEEDS (per cell, default 20), FIRST_SEED (1; thresholds are tuned on seeds
1001-99999, reported on 1-999 and 100001 and up), JOBS (2), CELLS (regular expression on cell names),
MODES ("topo hosts blind": which modes to run), MATRIX (eval/matrix.txt), EVAL_OUT (build/eval/matrix_runs.txt), EVAL_BIN (bin), TMPDIR,
EVAL_JSON_DIR (keep the analyzer's JSON of every run there, as CELL-SEED-MODE.json).
"""
import concurrent.futures as cf
import glob
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

BIN = os.environ.get("EVAL_BIN", "bin")
HOST_BASE = 10  # host i is 198.18.0.(10 + i) for i < 240 (docs/ground-truth.md)

# Finding kinds that are right for each fault kind (strict: a slow link reported as
# "congested" names the right place with the wrong story).
RIGHT_KINDS = {"slowx": {"slow"}, "rate": {"slow"}, "slow": {"slow"}, "loss": {"lossy"},
               "flap": {"lossy"}, "ecn": {"congested"}, "rnr": {"host"},
               "slow-responder": {"host"}, "nic-retransmit": {"host"}}


# Healthy cells: no fault; the shapes give the synthesizer ordinary uneven traffic. The
# incast host is drawn from the seed; the ECMP skew sends half the cross-leaf flows to
# spine0 (about 3x what another spine carries with 2 spines).
HEALTHY_SHAPES = ("healthy", "healthy-incast", "healthy-ecmp-imbalance")


def shape_args(cell, seed):
    if cell["faults_text"] == "healthy-incast":
        salt = sum(ord(c) for c in cell["name"])
        return ["--incast", host_ip(draw(seed, salt + 7, cell["hosts"])), "--incast-factor", "3"]
    if cell["faults_text"] == "healthy-ecmp-imbalance":
        return ["--ecmp-skew", "0.5"]
    return []


# ---------------------------------------------------------------- the matrix

def parse_matrix(path):
    cells = []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            cols = line.split()
            if len(cols) != 9:
                sys.exit("%s:%d: want 9 columns, got %d" % (path, lineno, len(cols)))
            name, fabric, load, mtu, duration, workload, vantage, faults, target = cols
            dims = [int(x) for x in fabric.split("/")]
            if len(dims) not in (3, 4):
                sys.exit("%s:%d: bad fabric '%s'" % (path, lineno, fabric))
            hosts, leaves, spines = dims[:3]
            cell = dict(name=name, hosts=hosts, leaves=leaves, spines=spines, load=load,
                        peers=dims[3] if len(dims) == 4 else 0,
                        mtu=int(mtu), duration=duration, workload=workload, vantage=vantage,
                        target=target, faults_text=faults, faults=[])
            if target != "missing" and faults not in HEALTHY_SHAPES:
                for spec in faults.split("+"):
                    parts = spec.split(":")
                    if len(parts) not in (3, 4) or parts[0] not in ("host", "fabric", "node") \
                            or parts[1] not in RIGHT_KINDS:
                        sys.exit("%s:%d: bad fault '%s'" % (path, lineno, spec))
                    cell["faults"].append(dict(where=parts[0], kind=parts[1], size=parts[2],
                                               dir=parts[3] if len(parts) == 4 else "both"))
            cells.append(cell)
    return cells


def time_s(text):
    units = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    m = re.fullmatch(r"([0-9.]+)(ns|us|ms|s)", text)
    return float(m.group(1)) * units[m.group(2)]


def est_packets(cell):
    """Data packets per run, roughly: hosts x load x 100 Gbit/s x duration / frame."""
    load = float(cell["load"].rstrip("%")) / 100
    frame = cell["mtu"] if cell["workload"] != "rpc" else 512
    return int(cell["hosts"] * load * 100e9 / 8 * time_s(cell["duration"]) / (frame + 70))


def host_ip(i):
    return "198.18.%d.%d" % (i // 240, HOST_BASE + i % 240)


def host_links(cell):
    per_leaf = -(-cell["hosts"] // cell["leaves"])
    return ["%s-leaf%d" % (host_ip(i), i // per_leaf) for i in range(cell["hosts"])]


def fabric_links(cell):
    return ["leaf%d-spine%d" % (l, s) for l in range(cell["leaves"]) for s in range(cell["spines"])]


def draw(seed, salt, n):
    """Deterministic draw from the seed (Knuth multiplicative hash), as synth_eval.py."""
    return ((seed * 2654435761 + salt * 40503) >> 7) % n


def place_faults(cell, seed):
    """Pick each fault's link (or host), direction and onset from the seed; faults of a
    cell never share a link or host."""
    placed, used = [], set()
    dur_us = time_s(cell["duration"]) * 1e6
    salt = sum(ord(c) for c in cell["name"])
    for k, fault in enumerate(cell["faults"]):
        pool = {"host": host_links(cell), "fabric": fabric_links(cell),
                "node": [host_ip(i) for i in range(cell["hosts"])]}[fault["where"]]
        i = draw(seed, salt + 101 * k + 1, len(pool))
        while pool[i] in used:
            i = (i + 1) % len(pool)
        subject = pool[i]
        used.add(subject)
        onset_us = int(dur_us * draw(seed, salt + 101 * k + 3, 5) / 10)  # 0-40% of the run
        f = dict(fault, subject=subject, onset="%dus" % onset_us)
        if fault["where"] != "node":
            a, b = subject.rsplit("-", 1) if fault["where"] == "fabric" else subject.split("-leaf")
            if fault["where"] == "host":
                b = "leaf" + b
            f["ends"] = (a, b)
            if fault["dir"] == "one":
                f["dirs"] = ["%s>%s" % (a, b)] if draw(seed, salt + 101 * k + 5, 2) == 0 \
                    else ["%s>%s" % (b, a)]
            else:
                f["dirs"] = ["%s>%s" % (a, b), "%s>%s" % (b, a)]
        placed.append(f)
    return placed


def synth_fault_args(f):
    if f["where"] == "node":
        return ["--host-fault", "host=%s,kind=%s,size=%s,onset=%s"
                % (f["subject"], f["kind"], f["size"], f["onset"])]
    args = []
    for d in (f["dirs"] if f["dir"] == "one" else [None]):
        base = "link=%s%s" % (f["subject"], ",dir=" + d if d else "")
        on = "onset=" + f["onset"]
        if f["kind"] == "slowx":
            n = int(f["size"].rstrip("x"))
            args += ["--fault", "%s,kind=slow,size=%dx,%s" % (base, n, on),
                     "--fault", "%s,kind=slow,size=%dus,%s" % (base, n - 1, on)]
        elif f["kind"] == "rate":
            args += ["--fault", "%s,kind=slow,size=%s,%s" % (base, f["size"], on)]
        elif f["kind"] == "flap":
            size, _, period = f["size"].partition("/")
            args += ["--fault", "%s,kind=flap,size=%s%s,%s"
                     % (base, size, ",period=" + period if period else "", on)]
        else:
            args += ["--fault", "%s,kind=%s,size=%s,%s" % (base, f["kind"], f["size"], on)]
    return args


def synth_command(cell, seed, work, faults):
    return [os.path.join(BIN, "agentxdp-synth"), "-q", "-o", work,
            "--hosts", str(cell["hosts"]), "--leaves", str(cell["leaves"]),
            "--spines", str(cell["spines"]), "--load", cell["load"], "--mtu", str(cell["mtu"]),
            "--duration", cell["duration"], "--workload", cell["workload"],
            "--vantage", cell["vantage"], "--snaplen", "128", "--seed", str(seed)] + \
        (["--peers", str(cell["peers"])] if cell["peers"] else []) + shape_args(cell, seed) + [a for f in faults for a in synth_fault_args(f)]


def fault_seen(f, truth):
    """Packets the fault could act on (model-side): a fault nobody crosses is invisible."""
    if f["where"] == "node":
        # Every host fault acts on reliable connections only: a slow responder delays its
        # ACKs and READ responses, RNR is a NAK, a NIC's early retransmit its ACK timer.
        # UC and UD requests get no response, so a host that only serves those shows nothing.
        # An RNR NAK answers a SEND only: a host that serves WRITEs and READs shows nothing.
        # A NIC's early timer acts only when it expires: a connection whose every answer came
        # back in time shows nothing (mixed workloads, 6 ms: 0 timeouts in 3 of 12 runs of
        # ho22-nicrt15-36 on seeds 4146-4157).
        role = "requester" if f["kind"] == "nic-retransmit" else "responder"
        return sum(q["request_packets"] for q in truth["qps"]
                   if q[role] == f["subject"] and q.get("transport", "RC") == "RC" and
                   (f["kind"] != "rnr" or q.get("ops") == "send") and
                   (f["kind"] != "nic-retransmit" or q.get("timeouts", 1) > 0))
    return sum(l["packets"] for l in truth["links"]
               if l["link"] == f["subject"] and l["dir"] in f["dirs"])


# ---------------------------------------------------------------- scoring

def finding_subjects(finding):
    """The subjects a finding names: one, or every member of an ambiguous set (a 'subjects'
    list, or a subject written as a list: 'a, b' or '{a | b}')."""
    if isinstance(finding.get("subjects"), list):
        return [str(s) for s in finding["subjects"]]
    subject = str(finding.get("subject", ""))
    if finding.get("subject_kind") == "path":
        return [subject]  # "a -> b": a host pair names neither host's link
    return [s.strip() for s in re.split(r"[,|{}]", subject) if s.strip()]


def names_fault(finding, f, topo):
    """Does the finding name fault f? With a topology: the faulty link (for a host fault:
    the host, or its access link). Without: the host whose access link (or NIC) is faulty,
    as a host_link or host finding; for a leaf-spine cable, a fabric finding whose
    connections cross it (crosses())."""
    subjects = finding_subjects(finding)
    kind = finding.get("subject_kind")
    if f["where"] == "node":
        host = f["subject"]
        return (kind in ("host", "host_link") and host in subjects) or \
            (kind == "link" and any(s.split("-leaf")[0] == host for s in subjects))
    if topo:
        return kind in ("link", "set") and f["subject"] in subjects
    if f["where"] == "fabric":
        return kind == "fabric" and crosses(finding, f)
    host = f["subject"].split("-leaf")[0]
    return kind in ("host_link", "host", "set") and host in subjects


def crosses(finding, f):
    """Without a topology a fabric finding cannot name the cable: it names the connections
    hurt. It names fault f when at least half of the connections it lists cross f's cable
    (either direction; f["crossing"] from truth.json: (destination, QPN) of both directions
    of every queue pair whose path holds the cable). Without truth (the evidence command)
    any fabric finding counts."""
    crossing = f.get("crossing")
    if crossing is None:
        return True
    flows = (finding.get("evidence") or {}).get("flows") or []
    if not flows:
        return False
    hit = sum((x.get("dst"), x.get("dst_qpn")) in crossing for x in flows)
    return 2 * hit >= len(flows)


def mark_crossing(f, truth):
    if f["where"] != "fabric":
        return
    f["crossing"] = set()
    for q in truth["qps"]:
        if f["subject"] in q.get("path", []) or f["subject"] in q.get("reverse_path", []):
            f["crossing"].add((q["responder"], q["responder_qpn"]))
            f["crossing"].add((q["requester"], q["requester_qpn"]))


def score(findings, faults, topo):
    """Counts for one (run, mode) and the findings marked for people."""
    alerts = [x for x in findings if x.get("level", "alert") == "alert"]
    notices = [x for x in findings if x.get("level", "alert") != "alert"]
    seen = [f for f in faults if f["seen"] > 0]
    named = set()
    marks = []
    c = dict(alerts=len(alerts), right=0, kind_ok=0, notices=len(notices), notices_right=0,
             top1=0, top3=0)
    for i, x in enumerate(alerts + notices):
        hits = [j for j, f in enumerate(faults) if names_fault(x, f, topo)]
        is_alert = i < len(alerts)
        kind_ok = any(x.get("kind") in RIGHT_KINDS[faults[j]["kind"]] for j in hits)
        if hits:
            if is_alert:
                named.update(j for j in hits if faults[j]["seen"] > 0)
                c["right"] += 1
                c["kind_ok"] += kind_ok
                if i == 0:
                    c["top1"] = 1
                if i < 3:
                    c["top3"] = 1
            else:
                c["notices_right"] += 1
        mark = ("right" if kind_ok else "right-place-wrong-kind") if hits else "wrong"
        subject = ",".join(finding_subjects(x)).replace(" ", "")
        marks.append("[%s%s] %s %s (%s) %.3f" % (
            mark, "" if is_alert else " notice", x.get("kind"), subject,
            (x.get("direction") or "-").replace(" ", ""), float(x.get("confidence", 0))))
    c.update(faults=len(faults), seen=len(seen), named=len(named), healthy=int(not faults))
    return c, marks


def fault_text(f):
    where = f["subject"] + ("" if f["where"] == "node" or f["dir"] == "both" else
                            " dir=" + f["dirs"][0])
    return "%s %s %s onset=%s seen_pkts=%d" % (f["kind"], f["size"], where, f["onset"], f["seen"])


# ---------------------------------------------------------------- running

def analyze(work, cell, topo, keep=None):
    if cell["vantage"] == "each-host":
        traces = sorted(glob.glob(os.path.join(work, "trace-*.pcapng")))
    else:
        traces = [os.path.join(work, "trace.pcapng")]
    cmd = [os.path.join(BIN, "agentxdp-analyze"), "-q"] + traces + ["--json"]
    if topo:
        cmd += ["--topology", os.path.join(work, "links.csv"),
                "--paths", os.path.join(work, "paths.csv")]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if r.returncode != 0:
        return None
    if keep:
        with open(keep, "wb") as f:
            f.write(r.stdout)
    try:
        return json.loads(r.stdout).get("findings") or []
    except ValueError:
        return None


def modes(cell):
    """topo; and without a topology: hosts for healthy cells and host faults, blind for
    cells with a leaf-spine cable fault (scored on fabric findings, crosses())."""
    only = os.environ.get("MODES", "topo hosts blind").split()
    no_topo = "hosts" if all(f["where"] in ("host", "node") for f in cell["faults"]) else "blind"
    return [m for m in ("topo", no_topo) if m in only]


def run(job):
    cell, seed = job
    faults = place_faults(cell, seed)
    work = tempfile.mkdtemp(prefix="agentxdp-matrix.")
    lines = []
    try:
        ok = subprocess.run(synth_command(cell, seed, work, faults),
                            stderr=subprocess.DEVNULL).returncode == 0
        truth = None
        if ok:
            with open(os.path.join(work, "truth.json")) as f:
                truth = json.load(f)
        for f in faults:
            f["seen"] = fault_seen(f, truth) if truth else 0
            if truth:
                mark_crossing(f, truth)
        for mode in modes(cell):
            head = "cell=%s seed=%d mode=%s target=%s" % (cell["name"], seed, mode, cell["target"])
            keep = os.environ.get("EVAL_JSON_DIR")
            if keep:
                os.makedirs(keep, exist_ok=True)
                keep = os.path.join(keep, "%s-%d-%s.json" % (cell["name"], seed, mode))
            findings = analyze(work, cell, mode == "topo", keep) if ok else None
            if findings is None:
                lines.append("%s status=%s | %s" % (head, "analyze-failed" if ok else
                                                   "synth-failed", cell["faults_text"]))
                continue
            c, marks = score(findings, faults, mode == "topo")
            counts = " ".join("%s=%d" % (k, c[k]) for k in
                              ("healthy", "faults", "seen", "named", "top1", "top3", "alerts",
                               "right", "kind_ok", "notices", "notices_right"))
            lines.append("%s status=ok %s | %s | %s" % (
                head, counts, " ; ".join(fault_text(f) for f in faults) or "healthy",
                " ; ".join(marks) or "no finding"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return lines


# ---------------------------------------------------------------- the table

def read_runs(path):
    runs = []
    with open(path) as f:
        for line in f:
            kv = dict(t.split("=", 1) for t in line.split(" | ")[0].split() if "=" in t)
            if "cell" in kv:
                runs.append(kv)
    return runs


def pct(a, b):
    return "%.0f%% (%d/%d)" % (100.0 * a / b, a, b) if b else "-"


def wilson(a, b, z=1.96):
    """The 95% Wilson score interval of a/b: where the rate of the population these runs
    sample lies, which a few hundred runs pin down only to a few points (round 43: healthy
    alerts 1.2% on seeds 774-776, 4.4% on 777-778, with one build)."""
    if not b:
        return (0.0, 1.0)
    p, n = a / b, float(b)
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def pct_ci(a, b):
    """pct() with the 95% interval: totals only, where a figure is read as the tool's rate."""
    if not b:
        return "-"
    lo, hi = wilson(a, b)
    return "%.1f%% (%d/%d; %.1f-%.1f)" % (100.0 * a / b, a, b, 100 * lo, 100 * hi)


TARGETS = (("top1", 0.95), ("precision", 0.95), ("kind", 0.90))


def aggregate(runs):
    s = dict(runs=0, failed=0, faulty=0, top1=0, top3=0, alerts=0, right=0, kind_ok=0,
             seen=0, named=0, healthy=0, alarmed=0, notices=0, notices_right=0, faulty_alerts=0)
    for r in runs:
        s["runs"] += 1
        if r.get("status") != "ok":
            s["failed"] += 1
            continue
        g = {k: int(r[k]) for k in ("healthy", "seen", "named", "top1", "top3", "alerts",
                                     "right", "kind_ok", "notices", "notices_right")}
        s["notices"] += g["notices"]
        s["notices_right"] += g["notices_right"]
        if g["healthy"]:
            s["healthy"] += 1
            s["alarmed"] += g["alerts"] > 0
            continue
        if g["seen"] == 0:
            continue  # every fault was on a link no packet crossed: not scorable
        s["faulty"] += 1
        for k in ("top1", "top3", "right", "kind_ok", "seen", "named"):
            s[k] += g[k]
        s["faulty_alerts"] += g["alerts"]
    return s


def misses(s, target):
    if target != "yes":
        return ""
    out = []
    if s["failed"]:
        out.append("failed runs")
    if s["faulty"]:
        if s["top1"] < 0.95 * s["faulty"]:
            out.append("top-1")
        if s["faulty_alerts"] and s["right"] < 0.95 * s["faulty_alerts"]:
            out.append("precision")
        if s["right"] and s["kind_ok"] < 0.90 * s["right"]:
            out.append("kind")
    if s["healthy"] and s["alarmed"] > 0.01 * s["healthy"]:
        out.append("false alarms")
    return ", ".join(out) or "ok"


def row(name, mode, target, s, fmt=pct):
    wrong = "%.2f" % ((s["faulty_alerts"] - s["right"]) / s["faulty"]) if s["faulty"] else "-"
    return "| %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %d/%d | %s |" % (
        name, mode, target, s["runs"], fmt(s["top1"], s["faulty"]), fmt(s["top3"], s["faulty"]),
        fmt(s["right"], s["faulty_alerts"]), fmt(s["named"], s["seen"]),
        fmt(s["kind_ok"], s["right"]), wrong, fmt(s["alarmed"], s["healthy"]),
        s["notices_right"], s["notices"], misses(s, target))


def print_table(runs, command, cells=None):
    print("| cell | mode | target | runs | top-1 | top-3 | precision | recall | right kind "
          "| wrong alerts per faulty run | healthy runs with an alert | notices naming a fault "
          "| misses |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    order = []
    for r in runs:
        if (r["cell"], r["mode"]) not in order:
            order.append((r["cell"], r["mode"]))
    target_of = {r["cell"]: r["target"] for r in runs}
    for name, mode in order:
        sel = [r for r in runs if r["cell"] == name and r["mode"] == mode]
        print(row(name, mode, target_of[name], aggregate(sel)))
    for mode in ("topo", "hosts", "blind"):
        for label, want in (("total, target cells", {"yes"}), ("total, all cells", {"yes", "no"})):
            sel = [r for r in runs if r["mode"] == mode and r["target"] in want]
            if sel:
                print(row("**%s**" % label, mode, "yes" if want == {"yes"} else "-",
                          aggregate(sel), pct_ci))
    if cells:
        missing = [c["name"] for c in cells if c["target"] == "missing"]
        if missing:
            print("\nNot run (the synthesizer has no option for them yet): " + ", ".join(missing))
    print("\nTotals give the 95% Wilson interval after the counts (a few hundred runs pin a rate "
          "down to a few points).")
    print("\nseeds %s; command: %s" % (seed_range(runs), command))


# ---------------------------------------------------------------- evidence

# The figures the alert-or-notice rules read (docs/localization.md), as the JSON names them.
EVIDENCE_KEYS = ("effect,load_ratio,late_load_ratio,floor_excess_us,floor_z,stall,stall_lead,"
                 "mark_outlier_ratio,mark_outlier_z,mark_lead,marks_floor,hurt_ce_z,peer_ce_rate")


def evidence_lines(json_dir, cells, pattern="", keys=EVIDENCE_KEYS):
    """Every finding of the kept JSON (CELL-SEED-MODE.json), scored as score() does."""
    by_name = {c["name"]: c for c in cells}
    keys = keys.split(",")
    lines = []
    for path in sorted(glob.glob(os.path.join(json_dir, "*.json"))):
        parts = os.path.basename(path)[:-len(".json")].rsplit("-", 2)
        if len(parts) != 3 or parts[0] not in by_name or not parts[1].isdigit() or \
                not re.search(pattern, parts[0]):
            continue  # not a run of this matrix
        name, seed, mode = parts
        faults = place_faults(by_name[name], int(seed))
        try:
            with open(path) as f:
                findings = json.load(f).get("findings") or []
        except (ValueError, AttributeError):
            lines.append("%s %s %s unreadable" % (name, seed, mode))
            continue
        for rank, x in enumerate(findings, 1):
            ev = x.get("evidence") or {}
            hit = any(names_fault(x, f, mode == "topo") for f in faults)
            mark = "right" if hit else "wrong" if faults else "healthy"
            lines.append("%-7s %s %s %s #%d %s %s %s signal=%s %s" % (
                mark, name, seed, mode, rank, x.get("level", "alert"), x.get("kind"),
                ",".join(finding_subjects(x)).replace(" ", ""), ev.get("signal"),
                " ".join("%s=%s" % (k, ev.get(k, "-")) for k in keys)))
    return lines


def seed_range(runs):
    seeds = sorted({int(r["seed"]) for r in runs})
    return "%d-%d" % (seeds[0], seeds[-1]) if seeds else "-"


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    if what not in ("run", "table", "list", "evidence"):
        # No default: a bare command must not start a 20-minute run.
        sys.exit(__doc__.strip() if not what else
                 "matrix_eval: unknown command %s (run, table, list, evidence)" % what)
    cells = parse_matrix(os.environ.get("MATRIX", "eval/matrix.txt"))
    if what == "list":
        for c in cells:
            print("%-22s %-8s %8d packets %s" % (c["name"], c["target"], est_packets(c),
                                                 " ".join(modes(c))))
        print("total %d packets per seed" % sum(est_packets(c) for c in cells
                                                 if c["target"] != "missing"))
        return
    if what == "evidence":
        if len(sys.argv) < 3:
            sys.exit("usage: matrix_eval.py evidence DIR [CELLS [KEYS]]")
        if not os.path.isdir(sys.argv[2]):
            sys.exit("matrix_eval: %s is not a directory (EVAL_JSON_DIR of a run)" % sys.argv[2])
        for line in evidence_lines(sys.argv[2], cells, *sys.argv[3:5]):
            print(line)
        return
    if what == "table":
        if len(sys.argv) < 3:
            sys.exit("usage: matrix_eval.py table FILE")
        runs = read_runs(sys.argv[2])
        print_table(runs, "python3 eval/matrix_eval.py table %s" % sys.argv[2], cells)
        return
    seeds = int(os.environ.get("SEEDS", "20"))
    first = int(os.environ.get("FIRST_SEED", "1"))
    jobs = int(os.environ.get("JOBS", "2"))
    pattern = os.environ.get("CELLS", "")
    out = os.environ.get("EVAL_OUT", "build/eval/matrix_runs.txt")
    for edge in (1000, 100000):
        if first <= edge < first + seeds:
            sys.exit("matrix_eval: seeds %d-%d straddle the tuning range (1001-99999) and a "
                     "reporting range (1-999, 100001 and up)" % (first, first + seeds - 1))
    todo_cells = [c for c in cells if c["target"] != "missing" and re.search(pattern, c["name"])]
    # Seed-major order, so an interrupted run still has every cell.
    todo = [(c, s) for s in range(first, first + seeds) for c in todo_cells]
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    start = time.time()
    with open(out, "w") as raw, cf.ThreadPoolExecutor(max_workers=jobs) as ex:
        for lines in ex.map(run, todo):
            for line in lines:
                raw.write(line + "\n")
            raw.flush()
    matrix = os.environ.get("MATRIX", "eval/matrix.txt")
    command = "%sSEEDS=%d FIRST_SEED=%d JOBS=%d%s bash eval/matrix_eval.sh" % (
        "MATRIX=%s " % matrix if matrix != "eval/matrix.txt" else "", seeds, first, jobs,
        " CELLS='%s'" % pattern if pattern else "")
    print_table(read_runs(out), command, cells)
    print("%d runs, wall time %.0f s with %d jobs; raw lines: %s"
          % (len(todo), time.time() - start, jobs, out))


if __name__ == "__main__":
    main()
