#!/usr/bin/env python3
"""check_otlp_body.py LOGFILE: check agentxdp-nicstat's OTLP/HTTP JSON bodies against the
OTLP specification's JSON encoding (field names, types, values). Prints PASS/FAIL lines."""
import json
import sys

failed = 0


def check(name, ok, why=""):
    global failed
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else ": " + why))
    failed += 0 if ok else 1


reqs = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
check("otlp-requests", len(reqs) >= 3, "got %d POSTs" % len(reqs))
check("otlp-path", all(r["path"] == "/v1/metrics" for r in reqs), str([r["path"] for r in reqs]))
check("otlp-content-type", all(r["content_type"] == "application/json" for r in reqs))
check("otlp-retry-same-body", len(reqs) >= 2 and reqs[0]["body"] == reqs[1]["body"],
      "the retried body differs")

first = json.loads(reqs[0]["body"])
last = json.loads(reqs[-1]["body"])
rm = first["resourceMetrics"][0]
attrs = {a["key"]: a["value"] for a in rm["resource"]["attributes"]}
check("otlp-resource-service-name", attrs.get("service.name") == {"stringValue": "agentxdp-nicstat"},
      str(attrs))
check("otlp-resource-host-name", "stringValue" in attrs.get("host.name", {}), str(attrs))
sm = rm["scopeMetrics"][0]
check("otlp-scope", sm["scope"]["name"] == "agentxdp", str(sm["scope"]))
metrics = {m["name"]: m for m in sm["metrics"]}
stat = metrics.get("agentxdp_nic_stat")
check("otlp-counter-name-without-total", stat is not None and "agentxdp_nic_stat_total" not in metrics,
      str(sorted(metrics)))
if stat:
    s = stat.get("sum", {})
    check("otlp-sum-monotonic", s.get("isMonotonic") is True, str(s.get("isMonotonic")))
    check("otlp-sum-cumulative", s.get("aggregationTemporality") == 2, str(s.get("aggregationTemporality")))
    check("otlp-unit", stat.get("unit") == "{event}", stat.get("unit"))
    pts = s.get("dataPoints", [])
    want = {"device": "mlx5_0", "port": "1", "netdev": "eth2", "source": "hw_counters",
            "counter": "np_cnp_sent"}
    match = [p for p in pts
             if {a["key"]: a["value"].get("stringValue") for a in p["attributes"]} == want]
    check("otlp-point-attributes", len(match) == 1, "no point with %s" % want)
    if match:
        p = match[0]
        check("otlp-asint-string", p.get("asInt") == "123456", repr(p.get("asInt")))
        check("otlp-time-string", isinstance(p.get("timeUnixNano"), str) and p["timeUnixNano"].isdigit()
              and int(p["timeUnixNano"]) > 1600000000 * 10**9, repr(p.get("timeUnixNano")))
        check("otlp-start-string", isinstance(p.get("startTimeUnixNano"), str)
              and int(p["startTimeUnixNano"]) <= int(p["timeUnixNano"]), repr(p.get("startTimeUnixNano")))
        check("otlp-attribute-order", [a["key"] for a in p["attributes"]] ==
              ["device", "port", "netdev", "source", "counter"])
    big = [p for p in pts if any(a["value"].get("stringValue") == "port_xmit_data" for a in p["attributes"])]
    check("otlp-64bit-exact", big and big[0].get("asInt") == "9223372036854775000",
          repr(big[0] if big else None))
lm = {m["name"]: m for m in last["resourceMetrics"][0]["scopeMetrics"][0]["metrics"]}
rate = lm.get("agentxdp_nic_stat_rate_per_second", {})
gpts = rate.get("gauge", {}).get("dataPoints", [])
check("otlp-gauge-points", len(gpts) > 0 and all(isinstance(p.get("asDouble"), (int, float)) for p in gpts),
      str(rate)[:200])
check("otlp-gauge-no-start", all("startTimeUnixNano" not in p for p in gpts))
health = lm.get("agentxdp_otlp_bodies", {}).get("sum", {}).get("dataPoints", [])
check("otlp-health-metric", {a["value"]["stringValue"] for p in health for a in p["attributes"]}
      == {"sent", "failed", "dropped"}, str(health)[:200])
sys.exit(1 if failed else 0)
