#!/usr/bin/env bash
# demo.sh: the README's first command. Make a small incident with a known answer (a fabric link
# that became 20 us slower 5 ms into the trace), analyze it like a capture from a mirror port,
# and show the verdict and the report. `scripts/demo.sh samples/NAME` analyzes a bundled sample.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${DEMO_OUT:-demo-out}
mkdir -p "$out"
if [ $# -ge 1 ]; then
	sample=$1
else
	sample=$out/incident
	fault='link=leaf0-spine1,dir=leaf0>spine1,kind=slow,size=20us,onset=5ms'
	echo "== agentxdp-synth: 8 hosts, 2 leaves, 2 spines, 20 ms of RDMA WRITEs; fault: $fault"
	rm -rf "$sample"
	./bin/agentxdp-synth -q -o "$sample" --hosts 8 --leaves 2 --spines 2 --duration 20ms --snaplen 128 \
		--seed 3 --fault "$fault"
fi
trace=$(ls "$sample"/trace*.pcap* 2>/dev/null | head -n 1)
[ -n "$trace" ] || { echo "demo: no trace in $sample" >&2; exit 1; }
topo=()
[ -f "$sample/links.csv" ] && topo+=(--topology "$sample/links.csv")
[ -f "$sample/paths.csv" ] && topo+=(--paths "$sample/paths.csv")
rm -f "$out/demo.db"
# Default options, as a user would type them: the window follows the trace's span.
echo "== agentxdp-analyze $trace ${topo[*]} -o $out/demo.db"
./bin/agentxdp-analyze "$trace" "${topo[@]}" -o "$out/demo.db"
echo
echo "== agentxdp-report $out/demo.db -o $out/report"
./bin/agentxdp-report "$out/demo.db" -o "$out/report" --top 8
echo
echo "database: $(pwd)/$out/demo.db (try: sqlite3 $out/demo.db 'select * from finding')"
