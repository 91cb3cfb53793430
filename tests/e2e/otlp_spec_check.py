#!/usr/bin/env python3
"""otlp_spec_check.py BODY.json [PROM_EXPOSITION]: check one OTLP/HTTP JSON metrics body
(ExportMetricsServiceRequest) against the OpenTelemetry protocol's JSON encoding.

Written from the specification (opentelemetry-proto metrics/v1/metrics.proto and the
OTLP/HTTP "JSON Protobuf Encoding" rules), not from our encoder:
  - field names are the proto's lowerCamelCase JSON names; no field outside the proto;
  - 64-bit integers (fixed64 times, uint64/int64 counts, asInt, bucketCounts, intValue)
    are JSON strings of digits; doubles (asDouble, sum, explicitBounds) are JSON numbers;
  - enums are integers (aggregationTemporality: 1 delta, 2 cumulative);
  - a metric has exactly one data field; a data point exactly one value field;
  - histogram: len(bucketCounts) == len(explicitBounds) + 1, bounds strictly increasing,
    the bucket counts add up to count; startTimeUnixNano <= timeUnixNano.
With PROM_EXPOSITION (the Prometheus text of the same interval), each OTLP counter and
histogram must carry the values the exposition has: counters by name without "_total",
histogram bounds equal to the "le" labels and count/sum equal to _count/_sum.
Prints "OK", or one line per violation, and exits 1 on any violation.
"""
import json
import re
import sys

errors = []


def err(path, why):
    errors.append(f"{path}: {why}")


def only_fields(obj, allowed, path):
    if not isinstance(obj, dict):
        err(path, f"not an object: {obj!r:.60}")
        return False
    for k in obj:
        if k not in allowed:
            err(path, f"field '{k}' is not in the OTLP proto (allowed: {sorted(allowed)})")
    return True


def u64_string(v, path, signed=False):
    pat = r"-?[0-9]+" if signed else r"[0-9]+"
    if not isinstance(v, str) or not re.fullmatch(pat, v):
        err(path, f"a 64-bit integer must be a JSON string of digits, got {v!r}")
        return None
    n = int(v)
    if not signed and n >= 2**64 or signed and not -(2**63) <= n < 2**63:
        err(path, f"{v} does not fit 64 bits")
    return n


def number(v, path):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        err(path, f"a double must be a JSON number, got {v!r}")
        return None
    return float(v)


ANY_VALUE = {"stringValue", "boolValue", "intValue", "doubleValue", "arrayValue", "kvlistValue", "bytesValue"}


def key_values(kvs, path):
    out = {}
    if not isinstance(kvs, list):
        err(path, "attributes must be a list")
        return out
    for i, kv in enumerate(kvs):
        p = f"{path}[{i}]"
        if not only_fields(kv, {"key", "value"}, p):
            continue
        if not isinstance(kv.get("key"), str):
            err(p, "key must be a string")
            continue
        if kv["key"] in out:
            err(p, f"duplicate attribute key {kv['key']}")
        v = kv.get("value", {})
        if only_fields(v, ANY_VALUE, p + ".value"):
            if len(v) != 1:
                err(p + ".value", f"AnyValue needs exactly one of {sorted(ANY_VALUE)}, got {sorted(v)}")
            if "intValue" in v:
                u64_string(v["intValue"], p + ".value.intValue", signed=True)
            if "stringValue" in v and not isinstance(v["stringValue"], str):
                err(p + ".value.stringValue", "not a string")
        out[kv["key"]] = v
    return out


def times(dp, path, need_start):
    t = u64_string(dp.get("timeUnixNano"), path + ".timeUnixNano")
    if t is not None and t < 1_000_000_000 * 10**9:
        err(path + ".timeUnixNano", f"{t} is not ns since the epoch (before 2001)")
    if "startTimeUnixNano" in dp or need_start:
        s = u64_string(dp.get("startTimeUnixNano"), path + ".startTimeUnixNano")
        if s is not None and t is not None and s > t:
            err(path, f"startTimeUnixNano {s} after timeUnixNano {t}")


NUMBER_DP = {"attributes", "startTimeUnixNano", "timeUnixNano", "asDouble", "asInt", "exemplars", "flags"}
HIST_DP = {"attributes", "startTimeUnixNano", "timeUnixNano", "count", "sum", "bucketCounts",
           "explicitBounds", "exemplars", "flags", "min", "max"}


def number_points(data, path, cumulative):
    pts = []
    for i, dp in enumerate(data.get("dataPoints", [])):
        p = f"{path}.dataPoints[{i}]"
        if not only_fields(dp, NUMBER_DP, p):
            continue
        attrs = key_values(dp.get("attributes", []), p + ".attributes")
        times(dp, p, cumulative)
        vals = [k for k in ("asDouble", "asInt") if k in dp]
        if len(vals) != 1:
            err(p, f"exactly one of asDouble/asInt, got {vals}")
            continue
        v = u64_string(dp["asInt"], p + ".asInt", signed=True) if "asInt" in dp else number(dp["asDouble"], p + ".asDouble")
        pts.append(({k: a.get("stringValue") for k, a in attrs.items()}, v))
    return pts


def hist_points(data, path):
    pts = []
    for i, dp in enumerate(data.get("dataPoints", [])):
        p = f"{path}.dataPoints[{i}]"
        if not only_fields(dp, HIST_DP, p):
            continue
        attrs = key_values(dp.get("attributes", []), p + ".attributes")
        times(dp, p, True)
        count = u64_string(dp.get("count"), p + ".count")
        counts = [u64_string(c, f"{p}.bucketCounts[{j}]") for j, c in enumerate(dp.get("bucketCounts", []))]
        bounds = [number(b, f"{p}.explicitBounds[{j}]") for j, b in enumerate(dp.get("explicitBounds", []))]
        if len(counts) != len(bounds) + 1:
            err(p, f"{len(counts)} bucketCounts for {len(bounds)} explicitBounds (must be one more)")
        if any(b is None for b in bounds) or any(b2 <= b1 for b1, b2 in zip(bounds, bounds[1:])):
            err(p + ".explicitBounds", "not strictly increasing numbers")
        if None not in counts and count is not None and sum(counts) != count:
            err(p, f"bucketCounts add up to {sum(counts)}, count is {count}")
        s = number(dp["sum"], p + ".sum") if "sum" in dp else None
        pts.append(({k: a.get("stringValue") for k, a in attrs.items()}, count, s, bounds))
    return pts


def parse_prom(path):
    """name -> list of (labels dict, value) from the text exposition."""
    out = {}
    line_re = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)')
    for line in open(path, encoding="utf-8"):
        if line.startswith("#") or not line.strip():
            continue
        m = line_re.match(line)
        if not m:
            continue
        labels = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
        out.setdefault(m.group(1), []).append((labels, float(m.group(4))))
    return out


def main():
    body = json.load(open(sys.argv[1], encoding="utf-8"))
    prom = parse_prom(sys.argv[2]) if len(sys.argv) > 2 else None
    only_fields(body, {"resourceMetrics"}, "$")
    got = {}  # name -> (kind, points)
    for r, rm in enumerate(body.get("resourceMetrics", [])):
        p = f"$.resourceMetrics[{r}]"
        only_fields(rm, {"resource", "scopeMetrics", "schemaUrl"}, p)
        res = rm.get("resource", {})
        only_fields(res, {"attributes", "droppedAttributesCount"}, p + ".resource")
        attrs = key_values(res.get("attributes", []), p + ".resource.attributes")
        if "stringValue" not in attrs.get("service.name", {}):
            err(p + ".resource", "no service.name string attribute (required by the resource semantic conventions)")
        for s, sm in enumerate(rm.get("scopeMetrics", [])):
            ps = f"{p}.scopeMetrics[{s}]"
            only_fields(sm, {"scope", "metrics", "schemaUrl"}, ps)
            only_fields(sm.get("scope", {}), {"name", "version", "attributes", "droppedAttributesCount"}, ps + ".scope")
            for m, met in enumerate(sm.get("metrics", [])):
                pm = f"{ps}.metrics[{m}]"
                if not only_fields(met, {"name", "description", "unit", "gauge", "sum", "histogram",
                                         "exponentialHistogram", "summary", "metadata"}, pm):
                    continue
                name = met.get("name")
                if not isinstance(name, str) or not name:
                    err(pm, "name must be a non-empty string")
                    continue
                pm = f"{pm}({name})"
                data = [k for k in ("gauge", "sum", "histogram", "exponentialHistogram", "summary") if k in met]
                if len(data) != 1:
                    err(pm, f"exactly one data field, got {data}")
                    continue
                kind = data[0]
                d = met[kind]
                if kind == "gauge":
                    only_fields(d, {"dataPoints"}, pm + ".gauge")
                    got[name] = (kind, number_points(d, pm + ".gauge", False))
                elif kind == "sum":
                    only_fields(d, {"dataPoints", "aggregationTemporality", "isMonotonic"}, pm + ".sum")
                    if d.get("aggregationTemporality") != 2:
                        err(pm + ".sum", f"aggregationTemporality {d.get('aggregationTemporality')!r}: a cumulative counter is the integer 2")
                    if d.get("isMonotonic") is not True:
                        err(pm + ".sum", f"isMonotonic {d.get('isMonotonic')!r}: a counter is true (a JSON boolean)")
                    got[name] = (kind, number_points(d, pm + ".sum", True))
                elif kind == "histogram":
                    only_fields(d, {"dataPoints", "aggregationTemporality"}, pm + ".histogram")
                    if d.get("aggregationTemporality") != 2:
                        err(pm + ".histogram", f"aggregationTemporality {d.get('aggregationTemporality')!r}, want 2")
                    got[name] = (kind, hist_points(d, pm + ".histogram"))
                else:
                    err(pm, f"unexpected {kind}")
    if not got:
        err("$", "no metrics")
    if prom is not None:
        compare(got, prom)
    print("\n".join(errors) if errors else "OK")
    sys.exit(1 if errors else 0)


def key(labels):
    return tuple(sorted(labels.items()))


def compare(got, prom):
    """Every OTLP counter/gauge/histogram value equals the exposition's."""
    for name, (kind, pts) in got.items():
        if kind == "histogram":
            counts = {key(l): v for l, v in prom.get(name + "_count", [])}
            sums = {key(l): v for l, v in prom.get(name + "_sum", [])}
            les = sorted({float(l["le"]) for l, _ in prom.get(name + "_bucket", []) if l["le"] != "+Inf"})
            if not counts:
                err(name, "histogram missing from the exposition")
            for attrs, count, s, bounds in pts:
                if bounds != les:
                    err(name, f"explicitBounds {bounds} != exposition le {les}")
                if counts.get(key(attrs)) != count:
                    err(name, f"{attrs}: count {count} != exposition {counts.get(key(attrs))}")
                if s is not None and abs(sums.get(key(attrs), -1) - s) > 1e-9 * max(1, abs(s)):
                    err(name, f"{attrs}: sum {s} != exposition {sums.get(key(attrs))}")
            continue
        pname = name + "_total" if kind == "sum" else name
        want = {key(l): v for l, v in prom.get(pname, [])}
        if not want and pts:
            err(name, f"{pname} missing from the exposition")
            continue
        if len(want) != len(pts):
            err(name, f"{len(pts)} points, the exposition has {len(want)} series")
        for attrs, v in pts:
            w = want.get(key(attrs))
            if w is None or v is None or abs(w - v) > 1e-9 * max(1, abs(w)):
                err(name, f"{attrs}: {v} != exposition {w}")


main()
