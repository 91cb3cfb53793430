/* report_fabric.c: the fabric picture, SVG written directly (tiers, links coloured by evidence). */
#include "lib/report/report_fabric.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lib/report/report_render.h"

#define FABRIC_MAX_NODES 400	/* beyond this a picture is no longer read at a glance */
#define ROW_GAP 150
#define FABRIC_MAX_LABELS 64	/* labels kept apart from each other */
#define NODE_GAP 80	/* switches apart */
#define HOST_GAP 26	/* hosts apart: their labels are slanted */

static const struct {
	const char *name, *colour, *legend;
	double width;
} states[] = {
	[LINK_IDLE] = { "idle", "#b8b8b8", "no flow crosses it", 1.5 },
	[LINK_HEALTHY] = { "healthy", "#2ca02c", "healthy", 2 },
	[LINK_ELEVATED] = { "elevated", "#e8b400", "loss, marks or latency above its peers (no finding)", 3 },
	[LINK_NOTICE] = { "notice", "#8c564b", "named by a notice", 3.5 },
	[LINK_ALERT] = { "alert", FABRIC_ALERT_COLOUR, "named by the verdict (alert)", 6 },
};

enum link_state report_link_state(const struct report_link *l)
{
	if (l->alerts)
		return LINK_ALERT;
	if (l->notices)
		return LINK_NOTICE;
	if (!l->flows || !(l->packets > 0))
		return LINK_IDLE;
	/* Thresholds of "worth a look": 1 retransmission per 1000 packets, 5% marked, 1.5x peers' p50. */
	if (l->loss / l->packets >= 1e-3 || l->marks / l->packets >= 0.05 || l->p50_vs_peers >= 1.5)
		return LINK_ELEVATED;
	return LINK_HEALTHY;
}

const char *report_link_state_name(enum link_state s)
{
	return states[s].name;
}

struct fnode {
	const char *name;
	const char *parent;	/* a host's leaf, for ordering; "" otherwise */
	int tier;
	double x, y;
};

static int node_order(const void *a, const void *b)
{
	const struct fnode *x = a, *y = b;
	int c;

	if (x->tier != y->tier)
		return x->tier > y->tier ? -1 : 1;
	if ((c = strcmp(x->parent, y->parent)))
		return c;
	return strcmp(x->name, y->name);
}

static struct fnode *find_node(struct fnode *n, size_t count, const char *name)
{
	for (size_t i = 0; i < count; i++)
		if (!strcmp(n[i].name, name))
			return &n[i];
	return NULL;
}

/* Nodes of the link table, each with its tier and (for hosts) the leaf it hangs off. */
static size_t collect_nodes(const struct report_data *d, struct fnode *n)
{
	size_t count = 0;

	for (size_t i = 0; i < d->n_links; i++) {
		const struct report_link *l = &d->links[i];
		const char *ends[2] = { l->a, l->b };
		int tiers[2] = { l->a_tier, l->b_tier };

		for (int e = 0; e < 2; e++) {
			struct fnode *f = find_node(n, count, ends[e]);

			if (!f) {
				if (count >= FABRIC_MAX_NODES)
					return count + 1;
				f = &n[count++];
				f->name = ends[e];
				f->parent = "";
				f->tier = tiers[e] < 0 ? 3 : tiers[e];
			}
			if (f->tier == 0 && !f->parent[0] && tiers[!e] == 1)
				f->parent = ends[!e];
		}
	}
	return count;
}

/* Rows from the top tier down; nodes spread evenly over each row. Returns the picture width. */
static int place_nodes(struct fnode *n, size_t count, int *height)
{
	size_t widest = 1, row_start = 0;
	int rows = 0, width;

	qsort(n, count, sizeof(*n), node_order);
	for (size_t i = 1; i <= count; i++)
		if (i == count || n[i].tier != n[row_start].tier) {
			size_t room = (i - row_start) * (n[row_start].tier ? NODE_GAP : HOST_GAP);

			if (room > widest)
				widest = room;
			row_start = i;
			rows++;
		}
	width = (int)widest + 120;
	if (width < 900)
		width = 900;
	row_start = 0;
	for (int r = 0; row_start < count; r++) {
		size_t end = row_start;

		while (end < count && n[end].tier == n[row_start].tier)
			end++;
		for (size_t i = row_start; i < end; i++) {
			/* 60 px margins: slanted host labels reach left of their node */
			n[i].x = 60 + (double)(width - 120) * (double)(2 * (i - row_start) + 1) /
					      (double)(2 * (end - row_start));
			n[i].y = 50 + r * ROW_GAP;
		}
		row_start = end;
	}
	*height = 50 + (rows - 1) * ROW_GAP + 110;
	return width;
}

static void svg_link(struct text_buf *out, const struct report_link *l, const struct fnode *a, const struct fnode *b)
{
	enum link_state s = report_link_state(l);

	text_buf_puts(out, "<line class=\"link\" data-link=\"");
	html_escape(out, l->name);
	text_buf_printf(out, "\" data-state=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\""
			     " stroke-width=\"%.1f\"%s><title>",
			states[s].name, a->x, a->y, b->x, b->y, states[s].colour, states[s].width,
			s == LINK_IDLE ? " stroke-dasharray=\"4 4\"" : "");
	html_escape(out, l->name);
	text_buf_printf(out, ": %u flows, %.0f packets, %.0f retransmitted, %.0f marks, p50 %.1f us (%s)</title></line>\n",
			l->flows, l->packets, l->loss, l->marks, l->p50_us, states[s].legend);
}

/*
 * The verdict's links again, labelled on top of everything: the name and the kind of fault,
 * a third of the way down from the upper end (links of a set meet at their spine), the full
 * severity as the label's tooltip.
 */
struct label_box {
	double x0, x1, y;
};

/* Where along the link (from its upper end) a label goes: the first spot clear of the others. */
static void place_label(struct label_box *placed, size_t *n_placed, const struct fnode *top,
			const struct fnode *bottom, double text_w, double *x, double *y)
{
	static const double spots[] = { 1.0 / 3, 0.5, 0.22, 0.62, 0.75 };
	size_t s = 0;

	for (; s < sizeof(spots) / sizeof(spots[0]); s++) {
		bool clear = true;

		*x = top->x + (bottom->x - top->x) * spots[s] + 8;
		*y = top->y + (bottom->y - top->y) * spots[s] + 4;
		for (size_t i = 0; i < *n_placed && clear; i++)
			clear = *x + text_w < placed[i].x0 || *x > placed[i].x1 || *y < placed[i].y - 16 ||
				*y > placed[i].y + 16;
		if (clear)
			break;
	}
	if (*n_placed < FABRIC_MAX_LABELS)
		placed[(*n_placed)++] = (struct label_box){ *x, *x + text_w, *y };
}

static void svg_alert_label(struct text_buf *out, const struct report_data *d, const struct report_link *l,
			    const struct fnode *a, const struct fnode *b, struct label_box *placed, size_t *n_placed)
{
	const struct report_finding *f = NULL;
	const struct fnode *top = a->y <= b->y ? a : b, *bottom = top == a ? b : a;
	double x, y;

	for (size_t k = 0; k < d->n_findings && !f; k++)
		if (d->findings[k].level[0] == 'a' && report_names_link(d->findings[k].subject, l->name))
			f = &d->findings[k];
	/* 12 px bold: about 7.5 px a character */
	place_label(placed, n_placed, top, bottom, 7.5 * (double)(strlen(l->name) + (f ? strlen(f->kind) + 3 : 0)),
		    &x, &y);
	text_buf_printf(out, "<text class=\"alert-label\" x=\"%.1f\" y=\"%.1f\" fill=\"%s\" font-size=\"12\""
			     " font-weight=\"bold\" stroke=\"#ffffff\" stroke-width=\"4\" paint-order=\"stroke\"><title>",
			x, y, FABRIC_ALERT_COLOUR);
	if (f)
		html_escape(out, f->severity_text);
	text_buf_puts(out, "</title>");
	html_escape(out, l->name);
	if (f)
		text_buf_printf(out, " (%s)", f->kind);
	text_buf_puts(out, "</text>\n");
}

/* Whether an alert names this node (a host finding, or a switch named as the subject). */
static bool node_alert(const struct report_data *d, const struct fnode *n)
{
	for (size_t k = 0; k < d->n_findings; k++)
		if (d->findings[k].level[0] == 'a' &&
		    (n->tier == 0 ? report_names_host(d->findings[k].subject, n->name)
				  : !strcmp(d->findings[k].subject, n->name)))
			return true;
	return false;
}

static void svg_node(struct text_buf *out, const struct report_data *d, const struct fnode *n, bool dense)
{
	bool host = n->tier == 0, alert = node_alert(d, n);
	double w = host ? 14 : 70, h = host ? 14 : 26;

	text_buf_printf(out, "<rect class=\"node%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.0f\" height=\"%.0f\" rx=\"%d\""
			     " fill=\"%s\" stroke=\"%s\" stroke-width=\"%d\"/>",
			alert ? " alert" : "", n->x - w / 2, n->y - h / 2, w, h, host ? 2 : 6,
			host ? "#dbe9f6" : "#f2f2f2", alert ? FABRIC_ALERT_COLOUR : "#333333", alert ? 3 : 1);
	if (host)
		text_buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" text-anchor=\"end\""
				     " transform=\"rotate(%d %.1f %.1f)\">",
				n->x + 4, n->y + 20, dense ? 9 : 11, dense ? -65 : -35, n->x + 4, n->y + 20);
	else
		text_buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">", n->x,
				n->y + 4);
	html_escape(out, n->name);
	text_buf_puts(out, "</text>\n");
}

/* Two rows: what a colour means must be readable without the caption. */
static void svg_legend(struct text_buf *out, int y0)
{
	double x = 10;

	for (int s = LINK_IDLE, y = y0; s <= LINK_ALERT; s++) {
		if (s == LINK_NOTICE) {
			x = 10;
			y += 18;
		}
		text_buf_printf(out, "<line x1=\"%.0f\" y1=\"%d\" x2=\"%.0f\" y2=\"%d\" stroke=\"%s\" stroke-width=\"%.1f\"%s/>"
				     "<text x=\"%.0f\" y=\"%d\" font-size=\"11\">%s</text>\n",
				x, y, x + 26, y, states[s].colour, states[s].width,
				s == LINK_IDLE ? " stroke-dasharray=\"4 4\"" : "", x + 32, y + 4, states[s].legend);
		x += 56 + 6.5 * (double)strlen(states[s].legend);
	}
}

void report_fabric_html(struct text_buf *out, const struct report_data *d)
{
	struct label_box placed[FABRIC_MAX_LABELS];
	size_t n_placed = 0;
	struct fnode *n;
	size_t count, n_hosts = 0;
	int width, height;

	text_buf_puts(out, "<h2>Fabric</h2>\n");
	if (!d->n_links) {
		text_buf_puts(out, "<p id=\"fabric-none\">No topology in this analysis: a picture of the fabric needs one "
				   "(<code>agentxdp-analyze TRACE --topology links.csv [--paths paths.csv] -o DB</code>).</p>\n");
		return;
	}
	n = calloc(FABRIC_MAX_NODES + 1, sizeof(*n));
	if (!n) {
		out->failed = true;
		return;
	}
	count = collect_nodes(d, n);
	if (count > FABRIC_MAX_NODES) {
		text_buf_printf(out, "<p id=\"fabric-none\">The topology has more than %d nodes: too many to draw at a "
				     "glance; the link table below ranks them.</p>\n", FABRIC_MAX_NODES);
		free(n);
		return;
	}
	width = place_nodes(n, count, &height);
	/* At its own size, scrolled sideways when wide: scaled down, 64 hosts are unreadable. */
	text_buf_printf(out, "<figure><div style=\"overflow-x:auto\"><svg id=\"fabric\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\""
			     " viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n"
			     "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
			width, height + 44, width, height + 44);
	for (size_t i = 0; i < d->n_links; i++)
		svg_link(out, &d->links[i], find_node(n, count, d->links[i].a), find_node(n, count, d->links[i].b));
	for (size_t i = 0; i < count; i++)
		n_hosts += n[i].tier == 0;
	for (size_t i = 0; i < count; i++)
		svg_node(out, d, &n[i], n_hosts && (double)width / (double)n_hosts < 60);
	for (size_t i = 0; i < d->n_links; i++)
		if (report_link_state(&d->links[i]) == LINK_ALERT)
			svg_alert_label(out, d, &d->links[i], find_node(n, count, d->links[i].a),
					find_node(n, count, d->links[i].b), placed, &n_placed);
	svg_legend(out, height + 12);
	text_buf_puts(out, "</svg></div><figcaption>Hosts (bottom), leaves and spines in tiers as links.csv connects them; "
			   "each link coloured by the evidence of the flows crossing it (hover for its numbers). "
			   "The verdict's links are drawn thick in red and labelled, a host or switch it names outlined in red.</figcaption></figure>\n");
	free(n);
}
