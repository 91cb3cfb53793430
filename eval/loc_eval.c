/*
 * loc_eval.c: localization accuracy over many seeded fabrics (docs/localization.md).
 *
 * Each run builds a 2-tier ECMP fabric in eval/fabric_sim.c with one faulty link direction
 * chosen at random (or none), runs localize() with links and paths, and, for host-link
 * faults, without any topology; it prints one markdown table of top-1 accuracy per fault
 * kind and the false-positive rate on healthy fabrics.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eval/fabric_sim.h"
#include "lib/localize/localize.h"
#include "lib/util/parse_num.h"
#include "lib/util/util.h"

struct scenario {
	const char *name;
	enum sim_fault_kind fault;
	double slow_factor, loss_rate, mark_rate;
	enum finding_kind want_kind;
};

static const struct scenario scenarios[] = {
	{ "slow 2x", SIM_SLOW, 2, 0, 0, FINDING_SLOW },
	{ "slow 5x", SIM_SLOW, 5, 0, 0, FINDING_SLOW },
	{ "slow 20x", SIM_SLOW, 20, 0, 0, FINDING_SLOW },
	{ "lossy 0.1%", SIM_LOSSY, 1, 0.001, 0, FINDING_LOSSY },
	{ "lossy 1%", SIM_LOSSY, 1, 0.01, 0, FINDING_LOSSY },
	{ "congested (ECN/CNP)", SIM_CONGESTED, 1, 0, 0.05, FINDING_CONGESTED },
	{ "healthy", SIM_HEALTHY, 1, 0, 0, FINDING_SLOW },
};

struct tally {
	unsigned runs, top1, kind_ok, any;
	double conf_sum;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: agentxdp-loc-eval [--seeds N] [--hosts N] [--leaves N] [--spines N]\n"
		"                         [--qps-per-host N] [--duration DURATION] [--window DURATION]\n"
		"                         [--bench] [--verbose]\n"
		"Localization accuracy over seeded leaf-spine fabrics with one faulty link.\n"
		"Durations need a unit (300ms, 1s), as in every agentxdp tool.\n"
		"  --bench     print rows for make bench (| figure | measured | target | command |)\n"
		"  --verbose   list every miss and false positive on stderr\n"
		"\n"
		"EXAMPLES:\n"
		"  agentxdp-loc-eval --seeds 100\n"
		"  agentxdp-loc-eval --seeds 20 --hosts 32 --leaves 8 --spines 4 --verbose\n");
}

static int run_one(const struct sim_config *sc, const struct scenario *s, bool with_topology,
		   struct tally *t, bool verbose)
{
	struct sim_result r;
	struct finding *f = NULL;
	size_t n = 0;
	int err = sim_run(sc, &r);
	if (getenv("LOCDBG"))
		fprintf(stderr, "== seed %u %s fault %s %s\n", sc->seed, with_topology ? "topo" : "hosts", r.fault_link, r.fault_dir);

	if (err) {
		fprintf(stderr, "agentxdp-loc-eval: simulation failed (seed %u)\n", sc->seed);
		return err;
	}
	err = localize(r.flows, r.n_flows, with_topology ? &r.topo : NULL, NULL, &f, &n);
	if (err) {
		fprintf(stderr, "agentxdp-loc-eval: localize failed: %s\n", strerror(-err));
		sim_free(&r);
		return err;
	}
	t->runs++;
	t->any += n > 0;
	if (getenv("LOC_EVAL_DEBUG") && (unsigned)atoi(getenv("LOC_EVAL_DEBUG")) == sc->seed)
		for (size_t i = 0; i < n; i++)
			fprintf(stderr, "   #%d %s %s dir '%s' sev %.4g conf %.2f: %s\n", f[i].rank,
				finding_kind_name(f[i].kind), f[i].subject, f[i].direction,
				f[i].severity, f[i].confidence, f[i].evidence);
	if (n && s->fault != SIM_HEALTHY) {
		const char *want = with_topology ? r.fault_link : r.fault_host;
		bool hit = !strcmp(f[0].subject, want);
		t->top1 += hit;
		t->kind_ok += hit && f[0].kind == s->want_kind;
		t->conf_sum += f[0].confidence;
	}
	if (verbose && (s->fault == SIM_HEALTHY ? n > 0 :
			!n || strcmp(f[0].subject, with_topology ? r.fault_link : r.fault_host)))
		fprintf(stderr, "  %s seed %u %s: fault %s (%s), top %s %s conf %.2f%s\n", s->name,
			sc->seed, with_topology ? "topo" : "no-topo", r.fault_link[0] ? r.fault_link : "-",
			r.fault_dir, n ? finding_kind_name(f[0].kind) : "-", n ? f[0].subject : "none",
			n ? f[0].confidence : 0.0, n > 1 ? " (+more)" : "");
	findings_free(f, n);
	sim_free(&r);
	return 0;
}

static void pct(char *buf, size_t len, unsigned num, unsigned den)
{
	if (!den)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f%% (%u/%u)", 100.0 * num / den, num, den);
}

struct eval_opts {
	struct sim_config base;
	uint64_t seeds;
	bool verbose, bench;
};

/* Returns -1 to go on, else the exit status (0 after --help, 2 on a usage error). */
static int parse_args(int argc, char **argv, struct eval_opts *o)
{
	static const struct option opts[] = {
		{ "seeds", required_argument, NULL, 's' },   { "hosts", required_argument, NULL, 'H' },
		{ "leaves", required_argument, NULL, 'L' },  { "spines", required_argument, NULL, 'S' },
		{ "qps-per-host", required_argument, NULL, 'q' },
		{ "duration", required_argument, NULL, 'd' }, { "window", required_argument, NULL, 'w' },
		{ "verbose", no_argument, NULL, 'v' },	     { "bench", no_argument, NULL, 'b' },	     { "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct sim_config *base = &o->base;
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "s:vh", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (parse_u64(optarg, 1, 100000, &o->seeds))
				goto bad;
			break;
		case 'H':
		case 'L':
		case 'S':
		case 'q':
			if (parse_u64(optarg, 1, 4096, &v))
				goto bad;
			*(c == 'H' ? &base->hosts : c == 'L' ? &base->leaves : c == 'S' ? &base->spines :
								       &base->qps_per_host) = (int)v;
			break;
		case 'd': /* long form only, like --window: one meaning per letter (docs/flags.md) */
			if (parse_duration_ns(optarg, DURATION_UNIT_REQUIRED, 10000000ull, 60000000000ull, &v))
				goto bad;
			base->duration_s = (double)v / 1e9;
			break;
		case 'w':
			if (parse_duration_ns(optarg, DURATION_UNIT_REQUIRED, 100000, 10000000000ull, &v))
				goto bad;
			base->window_ns = v;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'b':
			o->bench = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (base->hosts < 2 || base->hosts % base->leaves) {
		fprintf(stderr, "agentxdp-loc-eval: --hosts must be a multiple of --leaves and >= 2\n");
		return 2;
	}
	return -1;
bad:
	fprintf(stderr, "agentxdp-loc-eval: bad value '%s' for an option (durations need a unit)\n", optarg);
	return 2;
}

/* What one scenario scored over every seed, with and without topology. */
struct scenario_tally {
	struct tally topo, hosts, hosts_healthy;
};

static int run_scenario(const struct eval_opts *o, size_t i, struct scenario_tally *t)
{
	const struct scenario *s = &scenarios[i];

	for (uint64_t seed = 1; seed <= o->seeds; seed++) {
		struct sim_config sc = o->base;
		sc.seed = (uint32_t)(seed * 1000 + i);
		sc.fault = s->fault;
		sc.slow_factor = s->slow_factor;
		sc.loss_rate = s->loss_rate;
		sc.mark_rate = s->mark_rate;
		if (run_one(&sc, s, true, &t->topo, o->verbose))
			return -1;
		sc.host_links_only = true;
		if (run_one(&sc, s, false, s->fault == SIM_HEALTHY ? &t->hosts_healthy : &t->hosts,
			    o->verbose))
			return -1;
	}
	return 0;
}

/* Rows for make bench: | figure | measured | target | command |. */
static void print_bench_rows(const struct scenario *s, const struct scenario_tally *t,
			     const char *cmd)
{
	char a[64], b[64], d[64];

	if (s->fault == SIM_HEALTHY) {
		pct(a, sizeof(a), t->topo.runs - t->topo.any, t->topo.runs);
		pct(b, sizeof(b), t->hosts_healthy.runs - t->hosts_healthy.any,
		    t->hosts_healthy.runs);
		printf("| localization (fabric model): healthy, no finding (links + paths) | %s | >= 99%% | %s |\n",
		       a, cmd);
		printf("| localization (fabric model): healthy, no finding (no topology) | %s | >= 99%% | %s |\n",
		       b, cmd);
		return;
	}
	pct(a, sizeof(a), t->topo.top1, t->topo.runs);
	pct(d, sizeof(d), t->hosts.top1, t->hosts.runs);
	printf("| localization top-1 (fabric model), %s, links + paths | %s | >= 95%% | %s |\n", s->name,
	       a, cmd);
	printf("| localization top-1 (fabric model), %s host link, no topology | %s | >= 95%% | %s |\n",
	       s->name, d, cmd);
}

static void print_table_row(const struct scenario *s, const struct scenario_tally *t)
{
	char a[64], b[64], d[64], e[64];

	if (s->fault == SIM_HEALTHY) {
		pct(a, sizeof(a), t->topo.any, t->topo.runs);
		pct(b, sizeof(b), t->hosts_healthy.any, t->hosts_healthy.runs);
		printf("| healthy | - | - | - | links + paths: %s; no topology: %s |\n", a, b);
		return;
	}
	pct(a, sizeof(a), t->topo.top1, t->topo.runs);
	pct(b, sizeof(b), t->topo.kind_ok, t->topo.runs);
	pct(d, sizeof(d), t->hosts.top1, t->hosts.runs);
	pct(e, sizeof(e), t->topo.any, t->topo.runs);
	printf("| %s | %s | %s | %s | %s |\n", s->name, a, b, d, e);
}

int main(int argc, char **argv)
{
	struct eval_opts o = {
		.base = { .hosts = 16, .leaves = 4, .spines = 2, .qps_per_host = 4,
			  .duration_s = 0.3, .window_ns = 10000000, .link_latency_us = 1.0 },
		.seeds = 100,
	};
	const struct sim_config *base = &o.base;
	struct timespec t0, t1;
	char cmd[256];
	int rc = parse_args(argc, argv, &o);

	if (rc >= 0)
		return rc;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	snprintf(cmd, sizeof(cmd), "build/eval/agentxdp-loc-eval --seeds %llu", (unsigned long long)o.seeds);
	if (!o.bench) {
		printf("Fabric: %d hosts, %d leaves, %d spines, %d QPs per host, %.2f s simulated, "
		       "%llu ms windows, %llu seeds per row; faulty link and direction drawn per seed.\n\n",
		       base->hosts, base->leaves, base->spines, base->qps_per_host, base->duration_s,
		       (unsigned long long)(base->window_ns / 1000000), (unsigned long long)o.seeds);
		printf("| fault | top-1, links + paths | right kind too | top-1 host link, no topology "
		       "| any finding (healthy: false positive) |\n|---|---|---|---|---|\n");
	}
	for (size_t i = 0; i < ARRAY_SIZE(scenarios); i++) {
		struct scenario_tally t = { 0 };

		if (run_scenario(&o, i, &t) < 0)
			return 1;
		if (o.bench)
			print_bench_rows(&scenarios[i], &t, cmd);
		else
			print_table_row(&scenarios[i], &t);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (!o.bench)
		printf("\nWall time: %.1f s\n",
		       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	return 0;
}
