#!/usr/bin/env bash
# test_floor_step_light.sh: a link step in a light fabric is named by its floor even where its
# completion pick stays under slow_min_z (issue #17, round 17; docs/evaluation.md "Seventeenth
# round: a step in a light fabric"). Tuning seeds of eval/matrix.txt: slow20us-fab-light 3104
# (leaf2-spine1) and 3105 (leaf0-spine1), completion z 4.67 and 4.40, no finding before; and
# slowx5-fab-1dir 3115 (leaf0-spine3, 5x one way). Guard: the light fabric without a fault,
# the same seeds, has no alert.
# TEST_ANALYZE runs another build against the same traces.
. "$(dirname "$0")/../lib.sh"
synth_test_start floor-step-light

light=(--hosts 16 --leaves 4 --spines 2 --peers 4 --load 5% --mtu 1024 --duration 10ms
	--workload write --vantage mirror --snaplen 128)
run() { # TAG SEED [--fault ...]
	local tag=$1 seed=$2 d=$work/$1
	shift 2
	synth_analyze "$tag" "$d" "$d/out.json" "${light[@]}" --seed "$seed" "$@" -- \
		--topology "$d/links.csv" --paths "$d/paths.csv"
}

for case in 3104:leaf2-spine1:2000us 3105:leaf0-spine1:1000us; do
	IFS=: read -r seed link onset <<<"$case"
	run "light-$seed" "$seed" --fault "link=$link,kind=slow,size=20us,onset=$onset" || continue
	got=$(first_alert "$work/light-$seed/out.json")
	[ "$got" = "slow $link" ] && pass "light-$seed: slow $link is the first alert" ||
		fail "light-$seed: first alert slow $link" "$got"
done

d=$work/slowx5-3115
synth_analyze slowx5-3115 "$d" "$d/out.json" --hosts 16 --leaves 4 --spines 4 --load 20% \
	--mtu 1024 --duration 10ms --workload write --vantage mirror --snaplen 128 --seed 3115 \
	--fault 'link=leaf0-spine3,dir=spine3>leaf0,kind=slow,size=5x,onset=1000us' \
	--fault 'link=leaf0-spine3,dir=spine3>leaf0,kind=slow,size=4us,onset=1000us' -- \
	--topology "$d/links.csv" --paths "$d/paths.csv" &&
	got=$(first_alert "$d/out.json") &&
	{ [ "$got" = "slow leaf0-spine3" ] && pass "slowx5-3115: slow leaf0-spine3 is the first alert" ||
		fail "slowx5-3115: first alert slow leaf0-spine3" "$got"; }

for seed in 3104 3105; do
	run "healthy-$seed" "$seed" || continue
	n=$(alert_count "$work/healthy-$seed/out.json")
	[ "$n" = 0 ] && pass "healthy-$seed: no alert" || fail "healthy-$seed: no alert" "$n alerts"
done
exit 0
