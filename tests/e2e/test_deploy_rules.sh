#!/usr/bin/env bash
# test_deploy_rules.sh: the cluster view in deploy/ is valid and finds a slow link from series.
. "$(dirname "$0")/../lib.sh"
cd "$TOP/deploy"
if ! command -v promtool >/dev/null; then
	skip_or_fail_in_ci "deploy: promtool" "promtool not installed (Debian package prometheus)"
	exit 0
fi
check "deploy: promtool check rules" promtool check rules agentxdp-rules.yml
check "deploy: promtool test rules (slow host link, link named by two agents)" promtool test rules agentxdp-rules.test.yml
check "deploy: promtool check config" promtool check config --syntax-only prometheus.yml
check "deploy: Grafana dashboard is JSON with panels" jq -e '.panels | length > 5' grafana-dashboard.json
# Every metric the dashboard and rules query is one the agent exports (docs/metrics.md).
missing=""
for m in $(grep -ohE 'agentxdp_[a-z_]+' agentxdp-rules.yml grafana-dashboard.json | sort -u); do
	base=${m%_bucket}
	grep -q "$base" "$TOP/lib/export/agent_metrics.c" || missing="$missing $m"
done
[ -z "$missing" ] && pass "deploy: rules and dashboard use only exported metrics" || fail "deploy: unknown metrics" "$missing"
if command -v systemd-analyze >/dev/null; then
	systemd-analyze verify ./agentxdp-agent@.service >/tmp/agentxdp-unit.$$ 2>&1
	if grep -qiE "unknown|invalid|error" /tmp/agentxdp-unit.$$ && ! grep -q "Command /usr/local/bin/agentxdp-capture is not executable" /tmp/agentxdp-unit.$$; then
		fail "deploy: systemd unit verifies" "$(head -3 /tmp/agentxdp-unit.$$)"
	else
		pass "deploy: systemd unit verifies"
	fi
	rm -f /tmp/agentxdp-unit.$$
fi
