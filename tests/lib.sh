# tests/lib.sh: helpers sourced by every shell test. Each check prints one line:
#   PASS name | FAIL name: why | SKIP name: why
# tests/run.sh counts these lines. Source from a test with: . "$(dirname "$0")/../lib.sh"
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN="$TOP/bin"
SHARED_CAPTURES=${SHARED_CAPTURES:-$TOP/../shared/captures}
T_FAILED=0

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: ${2:-}"; T_FAILED=$((T_FAILED + 1)); }
# A skip must say why, loudly. Under CI, a skip for a missing kernel feature is a failure.
skip() { echo "SKIP $1: ${2:-}"; }
skip_or_fail_in_ci() {
	if [ "${CI:-}" = true ]; then fail "$1" "CI must run this: ${2:-}"; else skip "$1" "${2:-}"; fi
}
# check NAME CMD...: PASS when CMD succeeds.
check() {
	local name=$1
	shift
	if "$@" >/tmp/agentxdp-check.$$ 2>&1; then pass "$name"; else
		fail "$name" "$(tail -n 3 /tmp/agentxdp-check.$$ | tr '\n' ' ')"
	fi
	rm -f /tmp/agentxdp-check.$$
}
# expect_eq NAME EXPECTED ACTUAL
expect_eq() {
	if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "expected '$2', got '$3'"; fi
}
have_shared() { [ -d "$SHARED_CAPTURES" ] && ls "$SHARED_CAPTURES"/*.pcap >/dev/null 2>&1; }
need_root() { [ "$(id -u)" -eq 0 ]; }
tmpdir() { mktemp -d /tmp/agentxdp-test.XXXXXX; }
# tshark with the traps of ../shared/captures/README.md disabled.
tshark_roce() { tshark --disable-protocol rpcordma --disable-protocol nvme-rdma "$@" 2>/dev/null; }
# synth_test_start NAME: a test over agentxdp-synth traces. Sets SYNTH and ANALYZE
# (TEST_ANALYZE runs another build against the same traces) and $work, removed at exit;
# where either tool is not built, skips NAME and exits 0.
synth_test_start() {
	SYNTH=$BIN/agentxdp-synth ANALYZE=${TEST_ANALYZE:-$BIN/agentxdp-analyze}
	if [ ! -x "$SYNTH" ] || [ ! -x "$ANALYZE" ]; then
		skip "$1" "bin/agentxdp-synth or bin/agentxdp-analyze not built"
		exit 0
	fi
	work=$(tmpdir)
	trap 'rm -rf "$work"' EXIT
}
# synth_analyze TAG DIR JSON [SYNTH-ARGS...] -- [ANALYZE-ARGS...]: run
#   "$SYNTH" -q -o DIR SYNTH-ARGS, then "$ANALYZE" -q DIR/trace.pcapng --json ANALYZE-ARGS > JSON.
# On either error, fail TAG with the tool's first stderr line and return 1. The caller sets
# SYNTH and ANALYZE (ANALYZE may be another build, e.g. TEST_ANALYZE).
synth_analyze() {
	local tag=$1 dir=$2 json=$3 err synth_args=()
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		synth_args+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	err=$(mktemp /tmp/agentxdp-sa.XXXXXX)
	if ! "$SYNTH" -q -o "$dir" "${synth_args[@]}" 2>"$err"; then
		fail "$tag" "synth: $(head -n 1 "$err")"
		rm -f "$err"
		return 1
	fi
	if ! "$ANALYZE" -q "$dir/trace.pcapng" --json "$@" >"$json" 2>"$err"; then
		fail "$tag" "analyze: $(head -n 1 "$err")"
		rm -f "$err"
		return 1
	fi
	rm -f "$err"
}

# mirror_topo_run TAG DIR SEED FAULT [SYNTH-ARGS...]: synth_analyze a mirror trace of the busy
# oversubscribed shape of eval/matrix.txt's ecn20-fab-over (or the arguments given) with one
# fault (none when FAULT is empty), analyzed with its topology and paths into DIR/out.json.
mirror_topo_run() {
	local tag=$1 dir=$2 seed=$3 fault=$4
	shift 4
	[ $# -gt 0 ] || set -- --hosts 64 --leaves 8 --spines 2 --load 40% --mtu 4096 \
		--duration 5ms --workload write
	synth_analyze "$tag" "$dir" "$dir/out.json" "$@" --vantage mirror --snaplen 128 \
		--seed "$seed" ${fault:+--fault "$fault"} -- --topology "$dir/links.csv" \
		--paths "$dir/paths.csv"
}

# link_case_run TAG SEED:LINK:ONSET KIND-AND-SIZE [SYNTH-ARGS...]: mirror_topo_run one fault
# (link=LINK,KIND-AND-SIZE,onset=ONSET) into $work/SEED; sets seed, link and d (that
# directory) for the checks that follow.
link_case_run() {
	local tag=$1 spec=$3 onset
	IFS=: read -r seed link onset <<<"$2"
	d=$work/$seed
	shift 3
	mirror_topo_run "$tag" "$d" "$seed" "link=$link,$spec,onset=$onset" "$@"
}

# link_cases TAG KIND SPEC SHAPE CASE...: link_case_run every SEED:LINK:ONSET case with the
# fault SPEC on the fabric SHAPE (synthesizer words) and expect KIND LINK as its first
# alert; returns 1 when a run fails.
link_cases() {
	local tag=$1 kind=$2 spec=$3 shape=$4 case
	shift 4
	for case in "$@"; do
		# shellcheck disable=SC2086 # the shape's words
		link_case_run "$tag" "$case" "$spec" $shape || return 1
		expect_eq "$tag $seed: $link is the first alert, $kind" "$kind $link" \
			"$(first_alert "$d/out.json")"
	done
}

# hosts_first_alert TAG DIR: analyze DIR/trace.pcapng without a topology into DIR-hosts.json
# and print its first alert as [kind, subject_kind, subject] (fail TAG when analyze fails).
hosts_first_alert() {
	"$ANALYZE" -q --json "$2/trace.pcapng" >"$2-hosts.json" ||
		fail "$1" "analyze $2 without a topology failed"
	jq -c '[.findings[] | select(.level == "alert")][0] | [.kind, .subject_kind, .subject]' \
		"$2-hosts.json"
}

# coll_step_run TAG DIR SEED LINK ONSET: mirror_topo_run the shape of eval/matrix.txt's
# slow20us-fab-coll (32 hosts, 8 leaves, 4 spines, a collective at 10% load) with +20 us on
# LINK from ONSET, into DIR/out.json.
coll_step_run() {
	mirror_topo_run "$1" "$2" "$3" "link=$4,kind=slow,size=20us,onset=$5" --hosts 32 \
		--leaves 8 --spines 4 --load 10% --mtu 4096 --duration 10ms --workload collective
}

# each_run TAG NAME [SYNTH-ARGS...]: "$SYNTH" -q -o $work/NAME SYNTH-ARGS, then analyze every
# trace it wrote ($work/NAME/trace*.pcapng: one per host with --vantage each-host) without a
# topology into $work/NAME.json. On either error, fail TAG-NAME with the tool's first stderr
# line and return 1. After synth_test_start.
each_run() {
	local tag=$1 name=$2
	shift 2
	if ! "$SYNTH" -q -o "$work/$name" "$@" 2>"$work/err"; then
		fail "$tag-$name" "synth: $(head -n 1 "$work/err")"
		return 1
	fi
	if ! "$ANALYZE" -q "$work/$name"/trace*.pcapng --json >"$work/$name.json" 2>"$work/err"; then
		fail "$tag-$name" "analyze: $(head -n 1 "$work/err")"
		return 1
	fi
}

# The alerts of an analyze --json output FILE (notices left out), as the golden tests read them:
#   alert_count FILE   how many
#   first_alert FILE   "KIND SUBJECT" of the first ("null null" when there is none)
#   alert_list FILE    [["KIND","SUBJECT"],...] on one line
alert_count() { jq '[.findings[] | select(.level == "alert")] | length' "$1"; }
first_alert() { jq -r '[.findings[] | select(.level == "alert")][0] | "\(.kind) \(.subject)"' "$1"; }
alert_list() { jq -c '[.findings[] | select(.level == "alert") | [.kind, .subject]]' "$1"; }

# fabric_case TEST KIND NAME CABLE SYNTH-ARGS...: synthesize a mirror trace into $work/NAME,
# analyze it without a topology, and expect_fabric_alert() on it.
fabric_case() {
	local test=$1 kind=$2 name=$3 cable=$4 d=$work/$3
	shift 4
	synth_analyze "$test" "$d" "$d/out.json" "$@" --vantage mirror --snaplen 128 -- || exit 0
	expect_fabric_alert "$test $name" "$d/out.json" "$d" "$cable" "$kind"
}

# expect_fabric_alert TAG JSON DIR CABLE KIND [most|all]: expect the first alert of JSON to
# be a `fabric` finding of KIND, and most (half or more) or all of its listed connections
# to cross CABLE (fabric_crossing()).
expect_fabric_alert() {
	local tag=$1 json=$2 dir=$3 cable=$4 kind=$5 need=${6:-most} hit listed ok=false
	expect_eq "$tag: the first alert is a $kind fabric set" "$kind fabric" \
		"$(jq -r '[.findings[] | select(.level == "alert")][0] | "\(.kind) \(.subject_kind)"' "$json")"
	read -r hit listed < <(fabric_crossing "$json" "$dir" "$cable" "$kind")
	if [ "${listed:-0}" -gt 0 ]; then
		if [ "$need" = all ]; then
			[ "$hit" -eq "$listed" ] && ok=true
		else
			[ $((2 * hit)) -ge "$listed" ] && ok=true
		fi
	fi
	expect_eq "$tag: $need listed connections cross $cable ($hit of $listed)" true "$ok"
}

# fabric_crossing JSON DIR CABLE KIND: of the first `fabric` alert of KIND in JSON, how many
# of its listed connections ({dst, dst_qpn}) cross CABLE, then how many it lists ("HIT N").
# Crossing, from the synthesizer's DIR/truth.json: either end of a queue pair whose path or
# reverse path holds the cable (eval/matrix_eval.py's crosses()).
fabric_crossing() {
	jq -r --slurpfile t "$2/truth.json" --arg cab "$3" --arg kind "$4" '
		[$t[0].qps[] | select((.path + .reverse_path) | index($cab))
		 | "\(.responder)/\(.responder_qpn)", "\(.requester)/\(.requester_qpn)"] as $x
		| [.findings[] | select(.level == "alert" and .subject_kind == "fabric"
					and .kind == $kind)][0].evidence.flows // []
		| "\([.[] | select(("\(.dst)/\(.dst_qpn)") as $k | $x | index($k))] | length) \(length)"' "$1"
}
