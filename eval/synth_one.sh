#!/usr/bin/env bash
# eval/synth_one.sh SET KIND SEED: one evaluation run on a synthesized trace.
#   SET  topo  : faulty link drawn among all links; analyzed with --topology and --paths
#        hosts : faulty link drawn among host links; analyzed without topology
#   KIND healthy | slow2x | slow5x | slow20x | loss0.1 | loss1 | ecn
# Prints: SET KIND SEED FAULT_LINK WANT TOP_SUBJECT TOP_KIND N_FINDINGS CONFIDENCE
# "slow Nx" multiplies the link's whole latency contribution by N: its serializer runs N
# times slower (size=Nx) and its propagation + switching latency (--link-latency, 1 us)
# grows by (N-1) us (a second fault on the same link, size=(N-1)us).
set -u
cd "$(dirname "$0")/.."
set_name=$1 kind=$2 seed=$3
bin=${EVAL_BIN:-bin} # a copy of the tools, so a rebuild does not change a running evaluation
hosts=16 leaves=4 spines=2 per_leaf=$((16 / 4))
work=$(mktemp -d "${TMPDIR:-/tmp}/agentxdp-eval.XXXXXX")
trap 'rm -rf "$work"' EXIT

links=()
for ((i = 0; i < hosts; i++)); do links+=("198.18.0.$((10 + i))-leaf$((i / per_leaf))"); done
n_host_links=${#links[@]}
for ((l = 0; l < leaves; l++)); do for ((s = 0; s < spines; s++)); do links+=("leaf$l-spine$s"); done; done
pool=${#links[@]}
[ "$set_name" = hosts ] && pool=$n_host_links
# Deterministic draws from the seed (Knuth multiplicative hash).
draw() { echo $(((($seed * 2654435761 + $1 * 40503) >> 7) % $2)); }
link=${links[$(draw 1 $pool)]}
onset="$(draw 3 5)ms"
slow() { # N: serializer N times slower and (N-1) us more propagation latency
	fault=(--fault "link=$link,kind=slow,size=$1x,onset=$onset"
		--fault "link=$link,kind=slow,size=$(($1 - 1))us,onset=$onset")
}
case $kind in
healthy) fault=() ;;
slow2x) slow 2 ;;
slow5x) slow 5 ;;
slow20x) slow 20 ;;
loss0.1) fault=(--fault "link=$link,kind=loss,size=0.1%,onset=$onset") ;;
loss1) fault=(--fault "link=$link,kind=loss,size=1%,onset=$onset") ;;
ecn) fault=(--fault "link=$link,kind=ecn,size=20%,onset=$onset") ;;
*) echo "synth_one.sh: unknown kind $kind" >&2; exit 2 ;;
esac
[ "$kind" = healthy ] && link=-
want=$link
[ "$set_name" = hosts ] && [ "$link" != - ] && want=${link%-leaf*}

if ! "$bin"/agentxdp-synth -q -o "$work" --hosts $hosts --leaves $leaves --spines $spines \
	--duration "${EVAL_DURATION:-20ms}" --load "${EVAL_LOAD:-10%}" --mtu "${EVAL_MTU:-4096}" --snaplen 128 --seed "$seed" "${fault[@]}"; then
	echo "$set_name $kind $seed $link $want SYNTH-FAILED - 0 0"
	exit 0
fi
topo=()
[ "$set_name" = topo ] && topo=(--topology "$work/links.csv" --paths "$work/paths.csv")
if ! "$bin"/agentxdp-analyze -q "$work/trace.pcapng" --window 1ms "${topo[@]}" --json >"$work/out.json" 2>"$work/err"; then
	echo "$set_name $kind $seed $link $want ANALYZE-FAILED - 0 0"
	exit 0
fi
# jq, not python: interpreter start-up was most of a run's time.
jq -r --arg pre "$set_name $kind $seed $link $want" \
	'(.findings // []) as $f | if ($f | length) > 0
	 then "\($pre) \($f[0].subject | gsub(" "; "")) \($f[0].kind) \($f | length) \($f[0].confidence)"
	 else "\($pre) none - 0 0" end' "$work/out.json" 2>/dev/null ||
	echo "$set_name $kind $seed $link $want ANALYZE-FAILED - 0 0"
