#!/usr/bin/env bash
# demo.sh: the README's first command. Analyze a bundled sample (a fabric with one slow link)
# and show the verdict, then write the post-incident report.
set -euo pipefail
cd "$(dirname "$0")/.."
sample=${1:-samples/slow-link}
out=${DEMO_OUT:-demo-out}
trace=$(ls "$sample"/trace.pcap* 2>/dev/null | head -n 1)
[ -n "$trace" ] || { echo "demo: no trace in $sample (run 'make samples')" >&2; exit 1; }
mkdir -p "$out"
topo=()
[ -f "$sample/links.csv" ] && topo+=(--topology "$sample/links.csv")
[ -f "$sample/paths.csv" ] && topo+=(--paths "$sample/paths.csv")
echo "== agentxdp-analyze $trace ${topo[*]} -o $out/demo.db"
rm -f "$out/demo.db"
./bin/agentxdp-analyze "$trace" "${topo[@]}" -o "$out/demo.db"
if [ -x bin/agentxdp-report ]; then
	echo
	echo "== agentxdp-report $out/demo.db -o $out/report"
	./bin/agentxdp-report "$out/demo.db" -o "$out/report"
	echo
	echo "report: $(pwd)/$out/report/index.html"
fi
echo "database: $(pwd)/$out/demo.db (try: sqlite3 $out/demo.db 'select * from finding')"
