#!/usr/bin/env bash
# analyze_truth_diff.sh DIR DB: compare agentxdp-analyze's qp table (DB) with agentxdp-synth's
# truth.json in DIR, flow by flow and vantage by vantage. Prints one line per difference and
# a last line "flows=N compared, M differences". Counters must match exactly; ACK latency
# percentiles within 2% (the analyzer keeps exact samples up to a cap, then a <1% histogram).
# Exit 0 when there is no difference.
set -u
dir=$1 db=$2
fields="packets bytes first_transmissions retransmitted_packets naks_psn_seq naks_other rnr_naks timeouts cnps ecn_ce ack_samples"
# truth: trace src dst dst_qpn transport role counters... p50 p99 max (ns; "null" when none)
jq -r --arg f "$fields" '
	.vantages[] as $v | $v.flows[] |
	[$v.trace, .src, .dst, .dst_qpn, .transport, .role] + [($f | split(" "))[] as $k | .[$k]] +
	[.ack_latency_p50_ns, .ack_latency_p99_ns, .ack_latency_max_ns] | map(tostring) | join("\t")' \
	"$dir/truth.json" | sort >"$db.truth.tsv"
cols=$(for k in $fields; do printf 'q.%s, ' "$k"; done)
sqlite3 -separator $'\t' -nullvalue null "$db" "
	SELECT replace(c.path, rtrim(c.path, replace(c.path, '/', '')), ''), q.src_ip, q.dst_ip,
	       q.dst_qpn, q.transport, q.role, $cols
	       CAST(round(q.ack_latency_p50_us * 1000) AS INTEGER),
	       CAST(round(q.ack_latency_p99_us * 1000) AS INTEGER),
	       CAST(round(q.ack_latency_max_us * 1000) AS INTEGER)
	FROM qp q JOIN capture c ON c.id = q.capture_id" | sort >"$db.analyzed.tsv"
awk -F'\t' -v fields="$fields" '
	BEGIN { nf = split(fields, name, " ") }
	FNR == NR { key = $1 "\t" $2 "\t" $3 "\t" $4; truth[key] = $0; next }
	{
		key = $1 "\t" $2 "\t" $3 "\t" $4
		if (!(key in truth)) { printf "extra flow in analysis: %s\n", key; diffs++; next }
		n++
		split(truth[key], t, "\t")
		seen[key] = 1
		if (t[5] != $5) { printf "%s: transport truth=%s analyzed=%s\n", key, t[5], $5; diffs++ }
		if (t[6] != $6) { printf "%s: role truth=%s analyzed=%s\n", key, t[6], $6; diffs++ }
		for (i = 1; i <= nf; i++)
			if (t[6 + i] != $(6 + i)) {
				printf "%s: %s truth=%s analyzed=%s\n", key, name[i], t[6 + i], $(6 + i); diffs++
			}
		split("p50 p99 max", pn, " ")
		for (i = 1; i <= 3; i++) {
			a = t[6 + nf + i]; b = $(6 + nf + i)
			if (a == "null" || b == "null") {
				if (a != b) { printf "%s: ack_latency_%s_ns truth=%s analyzed=%s\n", key, pn[i], a, b; diffs++ }
				continue
			}
			d = a - b; if (d < 0) d = -d
			if (d > 0.02 * a + 1) { printf "%s: ack_latency_%s_ns truth=%s analyzed=%s (>2%%)\n", key, pn[i], a, b; diffs++ }
		}
	}
	END {
		for (k in truth) if (!(k in seen)) { printf "flow missing from analysis: %s\n", k; diffs++ }
		printf "flows=%d compared, %d differences\n", n, diffs
		exit diffs > 0
	}' "$db.truth.tsv" "$db.analyzed.tsv"
