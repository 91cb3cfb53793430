#!/usr/bin/env bash
# test_fabric_hops.sh: a slow spine cable and no topology (issue #17, item 4). The fabric
# finding names the hurt host pairs and, from the hop counts the packets' TTL / hop limit
# show, the leaf they all leave: the faulty cable's leaf, read from the incident's
# links.csv and truth.json, not from an earlier run. Native InfiniBand (no GRH, no TTL)
# must claim no leaf.
. "$(dirname "$0")/../lib.sh"
SYNTH=$BIN/agentxdp-synth ANALYZE=$BIN/agentxdp-analyze
if [ ! -x "$SYNTH" ] || [ ! -x "$ANALYZE" ] || ! command -v jq >/dev/null; then
	skip fabric-hops "bin/agentxdp-synth, bin/agentxdp-analyze or jq missing"
	exit 0
fi
work=$(tmpdir)
trap 'rm -rf "$work"' EXIT
LINK=leaf0-spine1
# 4 peers per host: hosts of one leaf talk to each other, so hop counts can join them.
fabric=(--hosts 16 --leaves 4 --spines 2 --duration 10ms --peers 4)
slow_cable=(--load 5% --snaplen 128 --seed 31 --fault "link=$LINK,kind=slow,size=19us,onset=3ms")

# synth NAME [options...]: the incident in $work/NAME and its analysis (no topology).
synth() {
	local name=$1
	shift
	"$SYNTH" -q -o "$work/$name" "${fabric[@]}" "$@" 2>"$work/$name.err" &&
		"$ANALYZE" -q "$work/$name"/*.pcapng --json >"$work/$name/out.json" 2>>"$work/$name.err"
}

# expand "198.18.0.10..13, 198.18.0.20": one address a line (runs of IPv4 addresses opened).
expand() {
	local part
	tr -d ' ' <<<"$1" | tr ',' '\n' | while read -r part; do
		case $part in
		*.*..*) local first=${part%%..*} last=${part##*..}
			for ((i = ${first##*.}; i <= last; i++)); do echo "${first%.*}.$i"; done ;;
		*) echo "$part" ;;
		esac
	done
}

# The first fabric finding's field (jq path after it), or "none".
fabric_field() {
	jq -r "[.findings[] | select(.subject_kind == \"fabric\")][0] // {} | $2 // \"none\"" \
		"$work/$1/out.json" 2>/dev/null
}

check_leaf() { # NAME: a fabric alert whose pairs cross the cable and leave its leaf
	local name=$1 d=$work/$1 leaf=${LINK%%-*} claim got bad
	expect_eq "fabric-hops-$name-alert" "alert" "$(fabric_field "$name" .level)"
	bad=$(jq -r --slurpfile t "$d/truth.json" '($t[0].faults[0].link) as $l |
		[$t[0].qps[] | select((.path + .reverse_path) | index($l)) |
		 "\(.requester) -> \(.responder)"] as $crossing |
		([.findings[] | select(.subject_kind == "fabric")][0].evidence.host_pairs // []) |
		if length < 3 then "only \(length) host pairs" else
		map(select(. as $p | $crossing | index($p) | not)) | join(", ") end' "$d/out.json")
	expect_eq "fabric-hops-$name-pairs-cross-the-cable" "" "$bad"
	claim=$(fabric_field "$name" '.evidence.leaf_groups.hurt_pairs_leave | if length == 1 then .[0] else null end')
	# Every host claimed is on the cable's leaf, two at least (a host of the leaf that no
	# hurt pair touches and that talks to no other of its hosts may be missing).
	got=$(expand "$claim" | awk -F, -v l="$leaf" 'NR == FNR { if ($3 == l) on[$2] = 1; next }
		{ n++; if (!($1 in on)) bad = bad " " $1 }
		END { print (n < 2 ? "only " n " hosts" : bad == "" ? "ok" : "not on " l ":" bad) }' \
		"$d/links.csv" -)
	expect_eq "fabric-hops-$name-leaf-of-the-cable" ok "$got"
	if fabric_field "$name" .severity_text | grep -q "pairs leave leaf {.*} (by hop count).*--topology"; then
		pass "fabric-hops-$name-text-names-the-leaf"
	else
		fail "fabric-hops-$name-text-names-the-leaf" "$(fabric_field "$name" .severity_text)"
	fi
}

if synth v4 "${slow_cable[@]}"; then check_leaf v4; else fail fabric-hops-v4 "$(head -n 1 "$work/v4.err")"; fi
# IPv6: the hop limit instead of the TTL; each host's own capture of what it sends and gets.
if synth v6 "${slow_cable[@]}" --ipv6 --vantage each-host; then
	check_leaf v6
else
	fail fabric-hops-v6 "$(head -n 1 "$work/v6.err")"
fi

# InfiniBand without a GRH: no hop count at all. Still a fabric finding, no leaf claimed.
if synth ib --link ib --load 10% --seed 1 --fault "link=$LINK,kind=slow,size=5x"; then
	expect_eq fabric-hops-ib-fabric-alert "alert" "$(fabric_field ib .level)"
	expect_eq fabric-hops-ib-no-ttl "no TTL or hop limit that fell on the way" \
		"$(fabric_field ib .evidence.leaf_groups.status)"
	expect_eq fabric-hops-ib-no-leaf "0" "$(fabric_field ib '.evidence.leaf_groups.hurt_pairs_leave | length')"
	if fabric_field ib .severity_text | grep -q "leaf {"; then
		fail fabric-hops-ib-text-claims-no-leaf "$(fabric_field ib .severity_text)"
	else
		pass fabric-hops-ib-text-claims-no-leaf
	fi
else
	fail fabric-hops-ib "$(head -n 1 "$work/ib.err")"
fi
exit $((T_FAILED > 0))
