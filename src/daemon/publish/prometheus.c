/*
 * prometheus.c - the Prometheus sink (see prometheus.h).
 *
 * Serving: libmicrohttpd runs with MHD_USE_EPOLL and no internal thread.
 * We own the listening socket (prom_accept.c): each connection's first
 * bytes are peeked, a dynolog RPC frame gets an immediate HTTP 400 (dyno
 * pointed at this port says so at once), HTTP goes to MHD_add_connection.
 * MHD's epoll descriptor joins our loop; when it is readable we call
 * M->run() once, then arm a one-shot timer for MHD's own connection
 * timeouts (none when no connection is open, so an idle daemon is never
 * woken).  Connection count, per-connection memory and idle time are capped
 * by MHD options, which bounds what slow or malicious clients can hold.
 *
 * Rendering: each collector (source) hands its frame to prom_update(); the
 * sink keeps the latest frame per source, and the page shows all of them,
 * mapped through the catalog to node_exporter style families.  The
 * node_exporter-named counters are the kernel's own totals (MK_TOTAL keys,
 * "@..."), published as read, as node_exporter does.  Our other counters:
 * the frame carries per-interval increases, so the sink keeps a running
 * total per series (starting at 0 when the daemon or the series starts: a
 * counter reset, which Prometheus' rate() handles).  Series absent from a
 * source's latest frame are not exposed (a vanished interface disappears),
 * and their totals are forgotten.
 */
#include "prometheus.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "core/clock.h"
#include "core/json.h"
#include "core/log.h"
#include "daemon/publish/catalog.h"
#include "core/net.h"
#include "daemon/publish/libs.h"
#include "daemon/publish/prom_accept.h"
#include "daemon/publish/prom_dcgm.h"
#include "daemon/publish/sink.h"

static const struct mhd_api *M; /* set by prom_new */

struct total {
	char *key;
	double v;
	uint64_t gen; /* generation of its source when last updated */
	size_t src;
};

struct prom_sink {
	struct ev_loop *loop;
	struct MHD_Daemon *mhd;
	struct prom_accept *acc;
	int epfd;
	struct ev_timer *timer;
	struct MHD_Response *page; /* current page; MHD keeps queued ones alive */
	int port;
	uint64_t requests;
	/* counter totals: open addressing on key */
	struct total *tot;
	size_t ntot, nslots;
	/* the latest frame of each source (grown on demand), counters already
	 * turned into totals */
	struct frame *last;
	uint64_t *gen;
	size_t nsrc;
	/* --prometheus_names=dcgm: GPU series under dcgm-exporter's names and labels */
	bool dcgm_names;
	char host[256];
};

/* ---------------- counter totals ---------------- */

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static struct total *tot_slot(struct total *t, size_t nslots, const char *key)
{
	size_t i = hash(key) & (nslots - 1);
	while (t[i].key && strcmp(t[i].key, key) != 0)
		i = (i + 1) & (nslots - 1);
	return &t[i];
}

/* drop_src: forget the totals of that source's series that its latest
 * frame lacked; SIZE_MAX: keep all (a plain resize) */
static void tot_rebuild(struct prom_sink *p, size_t nslots, size_t drop_src)
{
	struct total *t = xcalloc(nslots, sizeof *t);
	size_t n = 0;
	for (size_t i = 0; i < p->nslots; i++) {
		if (!p->tot[i].key)
			continue;
		if (p->tot[i].src == drop_src && p->tot[i].gen != p->gen[drop_src]) {
			free(p->tot[i].key); /* series gone from its source: forget its total */
			continue;
		}
		*tot_slot(t, nslots, p->tot[i].key) = p->tot[i];
		n++;
	}
	free(p->tot);
	p->tot = t;
	p->nslots = nslots;
	p->ntot = n;
}

static double tot_add(struct prom_sink *p, size_t src, const char *key, double inc)
{
	struct total *t = tot_slot(p->tot, p->nslots, key);
	if (!t->key) {
		t->key = xstrdup(key);
		t->v = 0;
		p->ntot++;
	}
	t->v += inc;
	t->gen = p->gen[src];
	t->src = src;
	double v = t->v;
	if (p->ntot * 2 > p->nslots)
		tot_rebuild(p, p->nslots * 2, SIZE_MAX);
	return v;
}

void prom_update(struct prom_sink *p, size_t src, const struct frame *f)
{
	if (src >= p->nsrc) {
		p->last = xrealloc(p->last, (src + 1) * sizeof *p->last);
		p->gen = xrealloc(p->gen, (src + 1) * sizeof *p->gen);
		for (size_t s = p->nsrc; s <= src; s++) {
			frame_init(&p->last[s]);
			p->gen[s] = 0;
		}
		p->nsrc = src + 1;
	}
	p->gen[src]++;
	struct frame *d = &p->last[src];
	frame_reset(d, f->wall_ns);
	buf_append(&d->names, f->names.data, f->names.len);
	if (d->cap < f->n) {
		d->cap = f->n;
		d->vals = xrealloc(d->vals, d->cap * sizeof *d->vals);
	}
	if (f->n)
		memcpy(d->vals, f->vals, f->n * sizeof *f->vals);
	d->n = f->n;
	for (size_t i = 0; i < d->n; i++) {
		struct frame_value *v = &d->vals[i];
		if (v->type == FV_STRING)
			continue;
		const char *suffix;
		const struct metric_desc *md = catalog_find(frame_key(d, v), &suffix);
		if (!md || md->kind != MK_COUNTER)
			continue;
		double inc = v->type == FV_INT ? (double)v->v.i : v->type == FV_UINT ? (double)v->v.u : v->v.f;
		v->type = FV_FLOAT;
		v->v.f = tot_add(p, src, frame_key(d, v), inc);
	}
	tot_rebuild(p, p->nslots, src);
}

/* ---------------- rendering ---------------- */

static void put_label_value(struct buf *o, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			buf_puts(o, "\\\\");
		else if (*s == '"')
			buf_puts(o, "\\\"");
		else if (*s == '\n')
			buf_puts(o, "\\n");
		else
			buf_putc(o, *s);
	}
}

static void put_value(struct buf *o, double v)
{
	if (isnan(v))
		buf_puts(o, "NaN");
	else if (isinf(v))
		buf_puts(o, v > 0 ? "+Inf" : "-Inf");
	else {
		char t[40];
		json_fmt_f64(t, v);
		buf_puts(o, t);
	}
}

static void render_process_info(const struct frame *f, struct buf *o)
{
	/* proc_job_id.<pid> / proc_cgroup.<pid> strings become one info series per pid */
	bool header = false;
	for (size_t i = 0; i < f->n; i++) {
		const struct frame_value *v = &f->vals[i];
		const char *k = frame_key(f, v);
		if (v->type != FV_STRING || strncmp(k, "proc_", 5) != 0)
			continue;
		const char *pid = strchr(k, '.');
		if (!pid || (strncmp(k, "proc_job_id.", 12) != 0 && strncmp(k, "proc_cgroup.", 12) != 0))
			continue;
		/* emit once per pid: at its first string key */
		bool first = true;
		for (size_t j = 0; j < i && first; j++) {
			const char *kj = frame_key(f, &f->vals[j]);
			const char *pj = strchr(kj, '.');
			if (f->vals[j].type == FV_STRING && pj && strncmp(kj, "proc_", 5) == 0 && strcmp(pj, pid) == 0)
				first = false;
		}
		if (!first)
			continue;
		if (!header) {
			buf_puts(o, "# HELP dynolog_process_info Attribution of a tracked process (value is always 1).\n"
				    "# TYPE dynolog_process_info gauge\n");
			header = true;
		}
		buf_printf(o, "dynolog_process_info{pid=\"");
		put_label_value(o, pid + 1);
		buf_puts(o, "\"");
		for (size_t j = i; j < f->n; j++) {
			const char *kj = frame_key(f, &f->vals[j]);
			const char *pj = strchr(kj, '.');
			if (f->vals[j].type != FV_STRING || !pj || strcmp(pj, pid) != 0)
				continue;
			const char *lname = strncmp(kj, "proc_job_id.", 12) == 0   ? "job_id"
					    : strncmp(kj, "proc_cgroup.", 12) == 0 ? "cgroup"
										   : NULL;
			if (!lname)
				continue;
			buf_printf(o, ",%s=\"", lname);
			put_label_value(o, f->names.data + f->vals[j].sval);
			buf_putc(o, '"');
		}
		buf_puts(o, "} 1\n");
	}
}

/* A series labelled by a GPU also carries its device's uuid and model,
 * node_exporter style, from the collector's gpu_uuid.<gpu> / gpu_name.<gpu>
 * strings; one labelled by a job (collect/gpu_jobs.c) its kind, user and
 * container. */
static const struct {
	const char *label, *key, *name;
} companions[] = {
	{"gpu", "gpu_uuid.", "uuid"},
	{"gpu", "gpu_name.", "model"},
	{"job_id", "gpu_job_kind.", "kind"},
	{"job_id", "gpu_job_user.", "user"},
	{"job_id", "gpu_job_container.", "container"},
};

static void companion_labels(const struct frame *f, const char *label, const char *suffix, struct buf *o)
{
	for (size_t l = 0; l < sizeof companions / sizeof companions[0]; l++)
		for (size_t j = 0; j < f->n && strcmp(companions[l].label, label) == 0; j++) {
			const char *k = frame_key(f, &f->vals[j]);
			size_t n = strlen(companions[l].key);
			if (f->vals[j].type == FV_STRING && strncmp(k, companions[l].key, n) == 0 &&
			    strcmp(k + n, suffix) == 0) {
				buf_printf(o, ",%s=\"", companions[l].name);
				put_label_value(o, f->names.data + f->vals[j].sval);
				buf_putc(o, '"');
				break;
			}
		}
}

static void render_frame(const struct prom_sink *p, const struct frame *f, struct buf *o);
static void render_self(const struct self_metric *self, size_t nself, struct buf *o);

void prom_render(struct prom_sink *p, const struct self_metric *self, size_t nself, struct buf *o)
{
	/* one frame with every source's latest values, so families stay contiguous */
	struct frame all;
	frame_init(&all);
	for (size_t s = 0; s < p->nsrc; s++) {
		const struct frame *f = &p->last[s];
		for (size_t i = 0; i < f->n; i++) {
			const struct frame_value *v = &f->vals[i];
			switch (v->type) {
			case FV_INT: frame_int(&all, frame_key(f, v), v->v.i); break;
			case FV_UINT: frame_uint(&all, frame_key(f, v), v->v.u); break;
			case FV_FLOAT: frame_float(&all, frame_key(f, v), v->v.f); break;
			case FV_STRING: frame_str(&all, frame_key(f, v), f->names.data + v->sval); break;
			}
		}
	}
	render_frame(p, &all, o);
	frame_free(&all);
	render_self(self, nself, o);
}

static void render_frame(const struct prom_sink *p, const struct frame *f, struct buf *o)
{
	if (p->dcgm_names)
		prom_dcgm_render(f, p->host, o);
	struct catalog_rows rows;
	catalog_rows(f, CATALOG_PROM, &rows);
	const char *cur = NULL;
	for (size_t r = 0; r < rows.n; r++) {
		const struct catalog_row *w = &rows.row[r];
		if (p->dcgm_names && prom_dcgm_covers(frame_key(f, &f->vals[w->idx])))
			continue; /* rendered under its DCGM name above */
		if (!cur || strcmp(cur, w->name) != 0) {
			cur = w->name;
			buf_printf(o, "# HELP %s %s\n# TYPE %s %s\n", cur,
				   w->d ? catalog_help(w->d) : "dynolog metric without a catalog entry.", cur,
				   w->d && (w->d->kind == MK_COUNTER || w->d->kind == MK_TOTAL) ? "counter" : "gauge");
		}
		buf_puts(o, cur);
		bool any = false;
		if (w->label) {
			buf_printf(o, "{%s=\"", w->d ? w->d->label : "key");
			put_label_value(o, w->label);
			buf_putc(o, '"');
			any = true;
		}
		if (w->label && w->d)
			companion_labels(f, w->d->label, w->suffix, o);
		if (w->d && w->d->fixed_label) {
			const char *eq = strchr(w->d->fixed_label, '=');
			buf_printf(o, "%s%.*s=\"%s\"", any ? "," : "{", (int)(eq - w->d->fixed_label), w->d->fixed_label,
				   eq + 1);
			any = true;
		}
		buf_puts(o, any ? "} " : " ");
		put_value(o, w->value);
		buf_putc(o, '\n');
	}
	catalog_rows_free(&rows);
	render_process_info(f, o);
}

static void render_self(const struct self_metric *self, size_t nself, struct buf *o)
{
	buf_printf(o, "# HELP dynolog_build_info dynolog version (value is always 1).\n"
		      "# TYPE dynolog_build_info gauge\n"
		      "dynolog_build_info{version=\"%s\"} 1\n",
		   DYNO_VERSION);
	/* self metrics, grouped by name in the order given */
	for (size_t i = 0; i < nself; i++) {
		if (i == 0 || strcmp(self[i].name, self[i - 1].name) != 0)
			buf_printf(o, "# HELP %s %s\n# TYPE %s %s\n", self[i].name, self[i].help, self[i].name,
				   self[i].type);
		buf_puts(o, self[i].name);
		if (self[i].label) {
			buf_printf(o, "{%s=\"", self[i].label);
			put_label_value(o, self[i].label_value);
			buf_puts(o, "\"}");
		}
		buf_putc(o, ' ');
		put_value(o, self[i].value);
		buf_putc(o, '\n');
	}
}

/* ---------------- serving ---------------- */

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				  const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
	(void)version;
	(void)upload;
	struct prom_sink *p = cls;
	if (*upload_size) {
		*upload_size = 0; /* discard any body */
		return MHD_YES;
	}
	if (!*con_cls) { /* first call: headers only; answer on the second */
		*con_cls = p;
		return MHD_YES;
	}
	p->requests++;
	struct MHD_Response *r = NULL;
	unsigned status;
	bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	if (strcmp(url, "/metrics") != 0) {
		static const char nf[] = "not found: metrics are at /metrics\n";
		r = M->create_response_from_buffer(sizeof nf - 1, (void *)nf, MHD_RESPMEM_PERSISTENT);
		status = MHD_HTTP_NOT_FOUND;
	} else if (!get) {
		static const char na[] = "method not allowed\n";
		r = M->create_response_from_buffer(sizeof na - 1, (void *)na, MHD_RESPMEM_PERSISTENT);
		if (r)
			M->add_response_header(r, "Allow", "GET, HEAD");
		status = MHD_HTTP_METHOD_NOT_ALLOWED;
	} else if (!p->page) {
		static const char su[] = "no sample collected yet\n";
		r = M->create_response_from_buffer(sizeof su - 1, (void *)su, MHD_RESPMEM_PERSISTENT);
		status = MHD_HTTP_SERVICE_UNAVAILABLE;
	} else {
		enum MHD_Result q = M->queue_response(c, MHD_HTTP_OK, p->page);
		return q;
	}
	if (!r)
		return MHD_NO;
	enum MHD_Result q = M->queue_response(c, status, r);
	M->destroy_response(r);
	return q;
}

static void drive(struct prom_sink *p);

static void on_timer(struct ev_loop *l, struct ev_timer *t, void *ud)
{
	(void)l;
	(void)t;
	drive(ud);
}

static void on_epoll(struct ev_loop *l, int fd, uint32_t events, void *ud)
{
	(void)l;
	(void)fd;
	(void)events;
	drive(ud);
}

/* Let MHD do its work, then arm our timer for its next timeout, if any. */
static void drive(struct prom_sink *p)
{
	M->run(p->mhd);
	MHD_UNSIGNED_LONG_LONG ms;
	if (M->get_timeout(p->mhd, &ms) == MHD_YES) {
		int64_t ns = ms > 86400000ull ? 86400 * NS_PER_SEC : (int64_t)ms * NS_PER_MS;
		ev_timer_set(p->timer, ns > 0 ? ns : 1, 0);
	} else {
		ev_timer_disarm(p->timer); /* no connection: nothing to time out, no wake-ups */
	}
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	struct buf b = BUF_INIT;
	buf_vprintf(&b, fmt, ap);
	while (b.len && b.data[b.len - 1] == '\n')
		buf_truncate(&b, b.len - 1);
	log_debug("prometheus http: %s", b.data);
	buf_free(&b);
}

/* An HTTP connection from prom_accept: MHD serves it from now on. */
static void handoff(void *ud, int fd, const struct sockaddr *addr, socklen_t len)
{
	struct prom_sink *p = ud;
	if (M->add_connection(p->mhd, fd, addr, len) != MHD_YES) /* MHD closed it */
		LOG_RATELIMITED(LOG_LEVEL_WARN, "prometheus: libmicrohttpd refused a connection: %s", strerror(errno));
	drive(p);
}

/* The daemon's RPC port, named when an RPC request reaches this port (RPC
 * starts after the sinks, so it is read when needed). */
static int rpc_port_hint;

void prom_note_rpc_port(int port)
{
	rpc_port_hint = port;
}

struct prom_sink *prom_new_offline(void)
{
	struct prom_sink *p = xcalloc(1, sizeof *p);
	p->epfd = -1;
	p->nslots = 64;
	p->tot = xcalloc(p->nslots, sizeof *p->tot);
	if (gethostname(p->host, sizeof p->host - 1) != 0)
		snprintf(p->host, sizeof p->host, "localhost");
	return p;
}

struct prom_sink *prom_new(struct ev_loop *loop, const struct prom_options *opt, struct buf *err)
{
	const char *addr = opt->address && *opt->address ? opt->address : "127.0.0.1";
	if (opt->port < 0 || opt->port > 65535) {
		buf_printf(err, "prometheus port %d out of range", opt->port);
		return NULL;
	}
	struct in6_addr a6;
	struct in_addr a4;
	if (inet_pton(AF_INET, addr, &a4) != 1 && inet_pton(AF_INET6, addr, &a6) != 1) {
		buf_printf(err, "prometheus address '%s' is not an IPv4 or IPv6 literal", addr);
		return NULL;
	}
	if (!(M = mhd_api(err)))
		return NULL;
	unsigned maxc = opt->max_connections ? opt->max_connections : 256;
	unsigned tmo = opt->timeout_s ? opt->timeout_s : 10;
	struct buf lerr = BUF_INIT;
	int bound = 0;
	int lfd = net_listen_tcp(addr, opt->port, 1024, &bound, &lerr);
	if (lfd < 0) {
		buf_printf(err, "cannot listen on %s:%d for Prometheus: %s", addr, opt->port, lerr.data);
		buf_free(&lerr);
		return NULL;
	}
	buf_free(&lerr);
	struct prom_sink *p = prom_new_offline();
	p->loop = loop;
	p->mhd = M->start_daemon(MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_USE_NO_LISTEN_SOCKET, 0, NULL, NULL,
				  on_request, p,
				  MHD_OPTION_CONNECTION_LIMIT, maxc,
				  MHD_OPTION_PER_IP_CONNECTION_LIMIT, 0u,
				  MHD_OPTION_CONNECTION_TIMEOUT, tmo,
				  MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)8192,
				  MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
				  MHD_OPTION_END);
	if (!p->mhd) {
		buf_printf(err, "cannot start libmicrohttpd for Prometheus on %s:%d: %s", addr, opt->port,
			   errno ? strerror(errno) : "it refused to start");
		close(lfd);
		prom_free(p);
		return NULL;
	}
	const union MHD_DaemonInfo *ei = M->get_daemon_info(p->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	p->epfd = ei ? ei->epoll_fd : -1;
	p->port = bound;
	p->acc = prom_accept_new(loop, lfd, maxc, (int)tmo * 1000, handoff, p);
	if (!p->acc) {
		close(lfd);
		buf_printf(err, "cannot add the Prometheus listener to the event loop");
		prom_free(p);
		return NULL;
	}
	prom_accept_set_rpc_port(p->acc, &rpc_port_hint);
	p->timer = ev_timer_add(loop, 0, 0, on_timer, p);
	if (p->timer)
		ev_timer_disarm(p->timer);
	if (p->epfd < 0 || !p->timer || ev_io_add(loop, p->epfd, EPOLLIN, on_epoll, p) < 0) {
		buf_printf(err, "cannot add the Prometheus server to the event loop");
		prom_free(p);
		return NULL;
	}
	return p;
}

void prom_free(struct prom_sink *p)
{
	if (!p)
		return;
	prom_accept_free(p->acc);
	if (p->loop && p->epfd >= 0)
		ev_io_del(p->loop, p->epfd);
	if (p->loop && p->timer)
		ev_timer_del(p->loop, p->timer);
	if (p->mhd)
		M->stop_daemon(p->mhd);
	if (p->page)
		M->destroy_response(p->page);
	for (size_t i = 0; i < p->nslots; i++)
		free(p->tot[i].key);
	free(p->tot);
	for (size_t s = 0; s < p->nsrc; s++)
		frame_free(&p->last[s]);
	free(p->last);
	free(p->gen);
	free(p);
}

int prom_port(const struct prom_sink *p) { return p->port; }
void prom_set_dcgm_names(struct prom_sink *p, bool on) { p->dcgm_names = on; }
uint64_t prom_requests(const struct prom_sink *p) { return p->requests; }

void prom_publish(struct prom_sink *p, const struct self_metric *self, size_t nself)
{
	if (!p->mhd)
		return; /* an offline sink (tests) serves nothing */
	struct buf page = BUF_INIT;
	prom_render(p, self, nself, &page);
	size_t len;
	char *data = buf_detach(&page, &len);
	struct MHD_Response *r = M->create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(data);
		LOG_ONCE(LOG_LEVEL_ERROR, "prometheus: cannot create a response; keeping the previous page");
		return;
	}
	M->add_response_header(r, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
	if (p->page)
		M->destroy_response(p->page); /* connections still sending it keep their reference */
	p->page = r;
}

/* ---------------- the sink table's row (publish/list.h) ---------------- */

struct prometheus_config {
	bool use;
	const char *address;
	int64_t port, max_conn, timeout_s;
	const char *names;
};

#define P(field, name, type, mv, help, lo, hi) MOD_OPT(struct prometheus_config, field, name, type, mv, help, lo, hi)
static const struct arg_opt prometheus_opts[] = {
	P(use, "use_prometheus", ARG_BOOL, NULL, "serve Prometheus metrics over HTTP", 0, 0),
	P(address, "prometheus_address", ARG_STRING, "ADDR", "Prometheus listen address (IPv4/IPv6 literal)", 0, 0),
	P(port, "prometheus_port", ARG_INT, "PORT", "Prometheus listen port (0: any free port, logged)", 0, 65535),
	P(max_conn, "prometheus_max_connections", ARG_INT, "N",
	  "concurrent HTTP connections served (more wait in the kernel backlog)", 1, 100000),
	P(timeout_s, "prometheus_timeout_s", ARG_INT, "SECONDS", "close idle HTTP connections after this long", 1,
	  3600),
	P(names, "prometheus_names", ARG_STRING, "dynolog|dcgm",
	  "GPU series names: dynolog_gpu_* (gpu, uuid, model labels) or dcgm-exporter's DCGM_FI_* names, labels and units",
	  0, 0),
	{0},
};
#undef P

static const struct prometheus_config prometheus_defaults = {false, "127.0.0.1", 8080, 1024, 10, "dynolog"};

static bool prometheus_validate(const void *cfg, struct buf *err)
{
	const char *n = ((const struct prometheus_config *)cfg)->names;
	if (strcmp(n, "dynolog") == 0 || strcmp(n, "dcgm") == 0)
		return true;
	buf_printf(err, "--prometheus_names=%s: expected dynolog or dcgm", n);
	return false;
}

static bool prometheus_enabled(const void *cfg) { return ((const struct prometheus_config *)cfg)->use; }

/* Each scrape connection is a descriptor: make room for the configured
 * number (the soft limit is often 1024; the hard one much higher). */
static void raise_fd_limit(rlim_t want)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = want < rl.rlim_max ? want : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < want)
		log_warn("open-file limit %llu is below --prometheus_max_connections + 128; connections beyond it "
			 "wait in the backlog",
			 (unsigned long long)rl.rlim_cur);
}

static bool prometheus_apply(void **state, const void *old, const void *cfg, const struct sink_env *env,
			     struct buf *err)
{
	const struct prometheus_config *n = cfg;
	if (*state) {
		prom_set_dcgm_names(*state, strcmp(n->names, "dcgm") == 0);
		/* (re)listen only when the server's settings changed */
		bool same = true;
		for (const struct arg_opt *o = prometheus_opts; o->name && same; o++)
			same = strcmp(o->name, "prometheus_names") == 0 || !mod_opt_changed(o, old, cfg);
		if (same)
			return true;
		prom_free(*state);
		*state = NULL;
	}
	raise_fd_limit((rlim_t)n->max_conn + 128);
	struct prom_options po = {n->address, (int)n->port, (unsigned)n->max_conn, (unsigned)n->timeout_s};
	struct prom_sink *p = prom_new(env->loop, &po, err);
	if (!p)
		return false;
	*state = p;
	prom_set_dcgm_names(p, strcmp(n->names, "dcgm") == 0);
	bool v6 = strchr(n->address, ':') != NULL;
	log_info("serving Prometheus metrics on http://%s%s%s:%d/metrics", v6 ? "[" : "", n->address, v6 ? "]" : "",
		 prom_port(p));
	return true;
}

static void prometheus_publish(void *state, size_t src, struct frame *f, const struct self_metrics *self)
{
	prom_update(state, src, f);
	prom_publish(state, self->v, self->n);
}

static void prometheus_close(void *state) { prom_free(state); }

static void prometheus_describe(const void *cfg, struct buf *out)
{
	(void)cfg;
	buf_puts(out, ", Prometheus");
}

const struct sink sink_prometheus = {
	.name = "prometheus",
	.config = {prometheus_opts, sizeof(struct prometheus_config), &prometheus_defaults},
	.validate = prometheus_validate,
	.enabled = prometheus_enabled,
	.apply = prometheus_apply,
	.publish = prometheus_publish,
	.wants_self = true,
	.close = prometheus_close,
	.describe = prometheus_describe,
};
