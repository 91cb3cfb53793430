#!/usr/bin/env bash
# test_nicstat.sh: agentxdp-nicstat on sysfs fixture trees laid out as mlx5, rxe, hns and
# bnxt_re lay them out: every counter read (unknown ones too), the right netdev for each
# binding method, usage errors, no-device behaviour, --help examples, Prometheus
# (promtool), textfile and SQLite outputs.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/fixture.sh"
NICSTAT=$BIN/agentxdp-nicstat
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT

if [ ! -x "$NICSTAT" ]; then
	fail nicstat-built "no $NICSTAT (run make)"
	exit 1
fi

# --- one fixture per driver, all on one host ---
SYS=$T/sys
fx_root "$SYS"
fx_mlx5 "$SYS" mlx5_0 eth2
fx_rxe "$SYS" rxe0 veth-axnic0
fx_hns "$SYS" hns_0 enp125s0f0
fx_bnxt "$SYS" bnxt_re0 ens1f0np0
fx_set "$SYS" mlx5_0 1 hw_counters np_cnp_sent 123456
fx_set "$SYS" mlx5_0 1 counters port_xmit_data 18446744073709551000
fx_set "$SYS" rxe0 1 hw_counters rcvd_seq_err 42
fx_set "$SYS" hns_0 1 hw_counters rx_cnp_pkt 7
fx_set "$SYS" bnxt_re0 1 hw_counters roce_adp_retrans 99
fx_set "$SYS" x 1 netdev:eth2 rx_crc_errors 5
# A counter no table knows (new firmware): passed through, not dropped.
echo 31337 >"$SYS/class/infiniband/mlx5_0/ports/1/hw_counters/vendor_future_counter"

"$NICSTAT" --sysfs "$SYS" -c 1 --json >"$T/one.json" 2>"$T/one.err"
expect_eq json-exit-0 0 $?
want=$(fx_count_files "$SYS")
got=$(jq -r 'select(.type=="counter") | .counter' "$T/one.json" | wc -l)
expect_eq every-counter-file-read "$want" "$got"
expect_eq lifespan-not-a-counter 0 "$(jq -r 'select(.counter=="lifespan")' "$T/one.json" | wc -l)"
expect_eq summary-line "4 4 $want" "$(jq -r 'select(.type=="read") | "\(.devices) \(.ports) \(.counters)"' "$T/one.json")"

value() { # DEV SOURCE COUNTER -> value
	jq -r --arg d "$1" --arg s "$2" --arg c "$3" \
		'select(.type=="counter" and .device==$d and .source==$s and .counter==$c) | .value' "$T/one.json"
}
netdev_of() { jq -r --arg d "$1" 'select(.type=="counter" and .device==$d) | .netdev' "$T/one.json" | sort -u; }
expect_eq mlx5-hw-counter 123456 "$(value mlx5_0 hw_counters np_cnp_sent)"
# jq reads numbers as doubles: check the 64-bit value in the raw line.
check mlx5-64bit-value grep -q '"counter":"port_xmit_data","value":18446744073709551000,' "$T/one.json"
expect_eq mlx5-unknown-counter-kept 31337 "$(value mlx5_0 hw_counters vendor_future_counter)"
expect_eq mlx5-netdev-stat 5 "$(value mlx5_0 netdev rx_crc_errors)"
expect_eq rxe-hw-counter 42 "$(value rxe0 hw_counters rcvd_seq_err)"
expect_eq hns-hw-counter 7 "$(value hns_0 hw_counters rx_cnp_pkt)"
expect_eq bnxt-hw-counter 99 "$(value bnxt_re0 hw_counters roce_adp_retrans)"
expect_eq mlx5-netdev-via-device-net eth2 "$(netdev_of mlx5_0)"
expect_eq rxe-netdev-via-parent veth-axnic0 "$(netdev_of rxe0)"
expect_eq hns-netdev-via-gid-attrs enp125s0f0 "$(netdev_of hns_0)"
expect_eq bnxt-netdev-via-device-net ens1f0np0 "$(netdev_of bnxt_re0)"
for d in mlx5_0 rxe0 hns_0 bnxt_re0; do
	n=$(find "$SYS/class/infiniband/$d/ports/1" -path '*counters/*' -type f ! -name lifespan | wc -l)
	expect_eq "$d-all-driver-counters" "$n" \
		"$(jq -c --arg d "$d" 'select(.type=="counter" and .device==$d and .source!="netdev")' "$T/one.json" | wc -l)"
done
expect_eq first-read-has-no-rate 0 "$(jq -r 'select(.type=="counter" and .rate_per_s!=null)' "$T/one.json" | wc -l)"

# Table output of a single read lists every counter with its value.
"$NICSTAT" --sysfs "$SYS" -c 1 >"$T/one.txt"
if grep -qE 'mlx5_0 +1 eth2 +hw_counters np_cnp_sent +123456 -$' "$T/one.txt"; then
	pass table-row
else
	fail table-row "$(grep np_cnp_sent "$T/one.txt" | head -2)"
fi

# An unreadable entry (a folder where a counter file should be) is skipped and counted.
mkdir "$SYS/class/infiniband/rxe0/ports/1/hw_counters/broken_entry"
echo "N/A (no PMA)" >"$SYS/class/infiniband/bnxt_re0/ports/1/counters/VL15_dropped"
"$NICSTAT" --sysfs "$SYS" -c 1 --json >"$T/err.json"
expect_eq unreadable-counted 2 "$(jq -r 'select(.type=="read") | .read_errors' "$T/err.json")"
expect_eq unreadable-skipped 0 "$(jq -r 'select(.counter=="broken_entry" or (.device=="bnxt_re0" and .counter=="VL15_dropped"))' "$T/err.json" | wc -l)"
rmdir "$SYS/class/infiniband/rxe0/ports/1/hw_counters/broken_entry"
echo 0 >"$SYS/class/infiniband/bnxt_re0/ports/1/counters/VL15_dropped"

# --- no RDMA device, no sysfs ---
EMPTY=$T/empty
fx_root "$EMPTY"
"$NICSTAT" --sysfs "$EMPTY" -c 3 >"$T/none.out" 2>"$T/none.err"
expect_eq no-device-exit-0 0 $?
check no-device-says-so grep -q "no RDMA device under $EMPTY/class/infiniband" "$T/none.err"
expect_eq no-device-no-output "" "$(cat "$T/none.out")"
"$NICSTAT" --sysfs "$EMPTY" --require 2>"$T/none.err"
expect_eq no-device-require-exit-1 1 $?
"$NICSTAT" --sysfs "$T/does-not-exist" 2>"$T/nosys.err"
expect_eq no-sysfs-exit-1 1 $?
expect_eq no-sysfs-one-line 1 "$(wc -l <"$T/nosys.err")"

# --- usage errors: exit 2, one line saying what and pointing to --help ---
usage_case() { # NAME EXPECTED-SUBSTRING ARGS...
	local name=$1 want=$2
	shift 2
	"$NICSTAT" --sysfs "$SYS" "$@" >/dev/null 2>"$T/usage.err"
	local rc=$?
	if [ $rc -eq 2 ] && grep -q -- "$want" "$T/usage.err" && [ "$(wc -l <"$T/usage.err")" -eq 1 ]; then
		pass "usage-$name"
	else
		fail "usage-$name" "rc=$rc: $(head -1 "$T/usage.err")"
	fi
}
usage_case interval-zero "invalid --interval '0'" --interval 0
usage_case interval-unit "invalid --interval '5parsecs'" --interval 5parsecs
usage_case count-text "invalid --count 'abc'" -c abc
usage_case count-zero "invalid --count '0'" -c 0
usage_case factor "invalid --factor '0.5'" --factor 0.5
usage_case min-rate "invalid --min-rate '-1'" --min-rate -1
usage_case otlp-url "invalid --otlp 'collector:4318'" --otlp collector:4318
usage_case unknown-option "unknown option '--bogus'" --bogus
usage_case missing-value "option '-c' needs a value" -c
usage_case extra-argument "unexpected argument 'eth0'" eth0
"$NICSTAT" --sysfs "$SYS" -c 1 --textfile "$T/no-such-dir" 2>"$T/tf.err"
expect_eq textfile-not-a-dir 1 $?

# --- --help: an Examples block whose options exist, and whose fixture-safe ones run ---
"$NICSTAT" --help >"$T/help.txt"
expect_eq help-exit-0 0 $?
sed -n '/^Examples:/,$p' "$T/help.txt" | grep 'agentxdp-nicstat' >"$T/examples.txt"
if [ "$(wc -l <"$T/examples.txt")" -ge 5 ]; then pass help-has-examples; else fail help-has-examples "$(cat "$T/examples.txt")"; fi
bad=""
for opt in $(grep -oE -- '(^| )--?[a-z][a-z-]*' "$T/examples.txt" | tr -d ' ' | sort -u); do
	grep -qE -- "(^|[ ,])$opt([ ,=]|$)" <(sed -n '/^Options:/,/^$/p' "$T/help.txt") || bad="$bad $opt"
done
expect_eq help-example-options-documented "" "$bad"
# Run each example against the fixture with short intervals and private outputs.
i=0
while read -r line; do
	i=$((i + 1))
	cmd=${line%%#*}
	cmd=${cmd%%|*}
	read -r -a argv <<<"$cmd"
	args=()
	for ((k = 1; k < ${#argv[@]}; k++)); do
		a=${argv[$k]}
		case $a in
		/var/lib/*) mkdir -p "$T/ex$i"; a=$T/ex$i ;;
		incident.db) a=$T/ex$i.db ;;
		/tmp/sysfs-copy) a=$SYS ;;
		http://collector:4318) a=http://127.0.0.1:9 ;;
		1s | 10s | 15s) a=10ms ;;
		esac
		args+=("$a")
	done
	grep -q -- '--sysfs' <<<"$cmd" || args+=(--sysfs "$SYS")
	grep -qE -- '(^| )-c ' <<<"$cmd" || args+=(-c 2)
	if timeout 20 "$NICSTAT" "${args[@]}" >/dev/null 2>"$T/ex.err"; then
		pass "help-example-$i-runs"
	else
		fail "help-example-$i-runs" "${args[*]}: $(head -1 "$T/ex.err")"
	fi
done <"$T/examples.txt"

# --- Prometheus exposition: promtool (lint included), values, textfile atomic ---
"$NICSTAT" --sysfs "$SYS" -c 2 --interval 20ms --prom "$T/nic.prom" --textfile "$T" -q >/dev/null
expect_eq prom-exit-0 0 $?
if command -v promtool >/dev/null; then
	check promtool-check-metrics promtool check metrics <"$T/nic.prom"
else
	skip promtool-check-metrics "promtool missing (Debian package prometheus; scripts/deps.sh installs it)"
fi
check prom-raw-counter grep -qx 'agentxdp_nic_stat_total{device="mlx5_0",port="1",netdev="eth2",source="hw_counters",counter="np_cnp_sent"} 123456' "$T/nic.prom"
check prom-rate-gauge grep -qx 'agentxdp_nic_stat_rate_per_second{device="hns_0",port="1",netdev="enp125s0f0",source="hw_counters",counter="rx_cnp_pkt"} 0' "$T/nic.prom"
check prom-signal-gauge grep -q '^agentxdp_nic_signal_rate_per_second{device="rxe0",port="1",netdev="veth-axnic0",signal="sequence_error"} 0$' "$T/nic.prom"
check prom-ports grep -qx 'agentxdp_nic_ports 4' "$T/nic.prom"
expect_eq prom-samples-per-counter "$want" "$(grep -c '^agentxdp_nic_stat_total{' "$T/nic.prom")"
check textfile-same-content cmp -s "$T/nic.prom" "$T/agentxdp_nicstat.prom"
expect_eq textfile-no-temp-left "" "$(ls "$T" | grep '\.tmp\.' || true)"

# --- SQLite: table nic_counter, one row per counter per read, NULL rate on the first ---
"$NICSTAT" --sysfs "$SYS" -c 3 --interval 20ms --db "$T/nic.db" -q >/dev/null
expect_eq db-exit-0 0 $?
expect_eq db-rows $((want * 3)) "$(sqlite3 "$T/nic.db" 'SELECT count(*) FROM nic_counter')"
expect_eq db-first-read-null-rate "$want" "$(sqlite3 "$T/nic.db" 'SELECT count(*) FROM nic_counter WHERE rate_per_s IS NULL')"
expect_eq db-reads 3 "$(sqlite3 "$T/nic.db" 'SELECT count(DISTINCT ts_ns) FROM nic_counter')"
expect_eq db-columns "ts_ns device port netdev source counter value rate_per_s" \
	"$(sqlite3 "$T/nic.db" 'SELECT name FROM pragma_table_info("nic_counter")' | tr '\n' ' ' | sed 's/ $//')"
expect_eq db-value 123456 "$(sqlite3 "$T/nic.db" "SELECT DISTINCT value FROM nic_counter WHERE device='mlx5_0' AND counter='np_cnp_sent'")"
# Appending to an existing database (CREATE TABLE IF NOT EXISTS) keeps the old rows.
"$NICSTAT" --sysfs "$SYS" -c 1 --db "$T/nic.db" -q >/dev/null
expect_eq db-append $((want * 4)) "$(sqlite3 "$T/nic.db" 'SELECT count(*) FROM nic_counter')"
echo "not a database" >"$T/bad.db"
"$NICSTAT" --sysfs "$SYS" -c 1 --db "$T/bad.db" >/dev/null 2>"$T/db.err"
expect_eq db-bad-file-exit-1 1 $?
check db-bad-file-says-so grep -q "cannot use database $T/bad.db" "$T/db.err"

exit $((T_FAILED > 0))
