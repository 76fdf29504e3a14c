/*
 * otlp.c - the OTLP/HTTP JSON sink (see otlp.h).
 *
 * libcurl's multi "socket" API tells us which descriptors to watch
 * (CURLMOPT_SOCKETFUNCTION) and when it needs a timeout
 * (CURLMOPT_TIMERFUNCTION); both map onto core/loop, so a slow or dead
 * collector endpoint costs the loop nothing but the events of its own
 * socket.  A payload is rendered once when queued and never touched again,
 * so retries resend the same bytes.
 */
#include "otlp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/json.h"
#include "core/log.h"
#include "daemon/publish/catalog.h"
#include "daemon/publish/libs.h"
#include "daemon/publish/sink.h"

static const struct curl_api *C; /* set by otlp_new */

struct payload {
	char *data;
	size_t len;
};

struct otlp_sink {
	struct ev_loop *loop;
	CURLM *multi;
	CURL *easy;   /* the transfer in flight, NULL when idle */
	struct curl_slist *headers;
	char *url, *service;
	char host[256];
	int64_t timeout_ms, backoff_ms, backoff_initial_ms, backoff_max_ms;
	struct ev_timer *curl_timer, *retry_timer;
	bool in_backoff;
	struct payload *q; /* ring */
	size_t qcap, qhead, qlen;
	size_t qbytes, max_bytes; /* bytes of the payloads queued (in flight included), their cap */
	int64_t *prev_ns; /* start of the current interval, per source (grown on demand) */
	size_t nsrc;
	struct otlp_stats st;
	int running;
};

/* ---------------- rendering ---------------- */

static void attr_str(struct jw *w, const char *k, const char *v, size_t vlen)
{
	jw_obj_begin(w);
	jw_key(w, "key");
	jw_str(w, k);
	jw_key(w, "value");
	jw_obj_begin(w);
	jw_key(w, "stringValue");
	jw_strn(w, v, vlen);
	jw_obj_end(w);
	jw_obj_end(w);
}

static void nano(struct jw *w, int64_t ns)
{
	char t[32];
	snprintf(t, sizeof t, "%lld", (long long)ns);
	jw_str(w, t); /* proto3 JSON: 64-bit integers are strings */
}

static const char *frame_string(const struct frame *f, const char *key)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->vals[i].type == FV_STRING && strcmp(frame_key(f, &f->vals[i]), key) == 0)
			return f->names.data + f->vals[i].sval;
	return NULL;
}

/* A GPU's attributes, as the OpenTelemetry hardware semantic conventions
 * name them (hw.gpu.*): hw.id the device's UUID (stable and unique on the
 * host; the index when NVML gives no UUID), hw.name the index ("0",
 * "1/mig0"), hw.model its name, hw.type "gpu", and for a MIG instance
 * hw.parent its GPU's hw.id. */
static void gpu_attrs(struct jw *w, const struct frame *f, const char *suffix, const char *fixed)
{
	char k[160];
	snprintf(k, sizeof k, "gpu_uuid.%s", suffix);
	const char *uuid = frame_string(f, k);
	attr_str(w, "hw.id", uuid ? uuid : suffix, strlen(uuid ? uuid : suffix));
	attr_str(w, "hw.name", suffix, strlen(suffix));
	snprintf(k, sizeof k, "gpu_name.%s", suffix);
	const char *model = frame_string(f, k);
	if (model)
		attr_str(w, "hw.model", model, strlen(model));
	if (!fixed || strncmp(fixed, "hw.type=", 8) != 0)
		attr_str(w, "hw.type", "gpu", 3);
	const char *slash = strchr(suffix, '/');
	if (slash) {
		snprintf(k, sizeof k, "gpu_uuid.%.*s", (int)(slash - suffix), suffix);
		const char *parent = frame_string(f, k);
		if (parent)
			attr_str(w, "hw.parent", parent, strlen(parent));
		else
			attr_str(w, "hw.parent", suffix, (size_t)(slash - suffix));
	}
}

void otlp_render(const struct frame *f, int64_t prev_ns, const char *service, const char *host, struct buf *out)
{
	struct catalog_rows rows;
	catalog_rows(f, CATALOG_OTLP, &rows);
	const struct catalog_row *row = rows.row;
	size_t nr = rows.n;

	struct jw w;
	jw_init(&w, out);
	jw_obj_begin(&w);
	jw_key(&w, "resourceMetrics");
	jw_arr_begin(&w);
	jw_obj_begin(&w);
	jw_key(&w, "resource");
	jw_obj_begin(&w);
	jw_key(&w, "attributes");
	jw_arr_begin(&w);
	attr_str(&w, "service.name", service, strlen(service));
	attr_str(&w, "host.name", host, strlen(host));
	attr_str(&w, "service.version", DYNO_VERSION, strlen(DYNO_VERSION));
	jw_arr_end(&w);
	jw_obj_end(&w);
	jw_key(&w, "scopeMetrics");
	jw_arr_begin(&w);
	jw_obj_begin(&w);
	jw_key(&w, "scope");
	jw_obj_begin(&w);
	jw_key(&w, "name");
	jw_str(&w, "dynolog");
	jw_key(&w, "version");
	jw_str(&w, DYNO_VERSION);
	jw_obj_end(&w);
	jw_key(&w, "metrics");
	jw_arr_begin(&w);
	for (size_t r = 0; r < nr;) {
		const char *name = row[r].name;
		bool sum = row[r].d && row[r].d->kind == MK_COUNTER;
		jw_obj_begin(&w);
		jw_key(&w, "name");
		jw_str(&w, name);
		if (row[r].d && row[r].d->help) {
			jw_key(&w, "description");
			jw_str(&w, row[r].d->help);
		}
		jw_key(&w, "unit");
		jw_str(&w, row[r].d ? row[r].d->otel_unit : "1");
		jw_key(&w, sum ? "sum" : "gauge");
		jw_obj_begin(&w);
		if (sum) {
			jw_key(&w, "aggregationTemporality");
			jw_i64(&w, 1); /* DELTA: the frame carries per-interval increases */
			jw_key(&w, "isMonotonic");
			jw_bool(&w, true);
		}
		jw_key(&w, "dataPoints");
		jw_arr_begin(&w);
		for (; r < nr && strcmp(row[r].name, name) == 0; r++) {
			const struct catalog_row *o = &row[r];
			if (!isfinite(o->value))
				continue;
			jw_obj_begin(&w);
			jw_key(&w, "attributes");
			jw_arr_begin(&w);
			if (o->suffix && o->d && strcmp(o->d->otel_attr, "hw.id") == 0) {
				gpu_attrs(&w, f, o->suffix, o->d->otel_fixed);
			} else if (o->suffix) {
				attr_str(&w, o->d ? o->d->otel_attr : "dynolog.label", o->label, strlen(o->label));
				if (o->d && strcmp(o->d->otel_attr, "process.pid") == 0) {
					char k[64];
					snprintf(k, sizeof k, "proc_job_id.%s", o->suffix);
					const char *job = frame_string(f, k);
					if (job)
						attr_str(&w, "slurm.job.id", job, strlen(job));
				}
			}
			if (o->d && o->d->otel_fixed) {
				const char *eq = strchr(o->d->otel_fixed, '=');
				char k[64];
				snprintf(k, sizeof k, "%.*s", (int)(eq - o->d->otel_fixed), o->d->otel_fixed);
				attr_str(&w, k, eq + 1, strlen(eq + 1));
			}
			jw_arr_end(&w);
			if (sum) {
				jw_key(&w, "startTimeUnixNano");
				nano(&w, prev_ns > 0 && prev_ns < f->wall_ns ? prev_ns : f->wall_ns);
			}
			jw_key(&w, "timeUnixNano");
			nano(&w, f->wall_ns);
			jw_key(&w, "asDouble");
			jw_f64(&w, o->value);
			jw_obj_end(&w);
		}
		jw_arr_end(&w);
		jw_obj_end(&w);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_obj_end(&w);
	jw_arr_end(&w);
	jw_obj_end(&w);
	jw_arr_end(&w);
	jw_obj_end(&w);
	catalog_rows_free(&rows);
}

/* ---------------- queue and transfers ---------------- */

static void start_next(struct otlp_sink *s);

static void q_pop(struct otlp_sink *s)
{
	s->qbytes -= s->q[s->qhead].len;
	free(s->q[s->qhead].data);
	s->q[s->qhead].data = NULL;
	s->qhead = (s->qhead + 1) % s->qcap;
	s->qlen--;
}

static size_t discard(char *p, size_t sz, size_t n, void *ud)
{
	(void)p;
	(void)ud;
	return sz * n; /* the response body carries nothing we act on */
}

static void finish(struct otlp_sink *s, CURLcode rc)
{
	long status = 0;
	curl_off_t retry_after = 0;
	C->easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &status);
	C->easy_getinfo(s->easy, CURLINFO_RETRY_AFTER, &retry_after);
	C->multi_remove_handle(s->multi, s->easy);
	C->easy_cleanup(s->easy);
	s->easy = NULL;
	bool retry = false;
	if (rc != CURLE_OK) {
		LOG_ONCE(LOG_LEVEL_WARN, "otlp: POST %s failed: %s (will retry with backoff)", s->url,
			 C->easy_strerror(rc));
		s->st.failures++;
		retry = true;
	} else if (status >= 200 && status < 300) {
		s->st.sent++;
		s->backoff_ms = 0;
		q_pop(s);
	} else if (status == 429 || status == 502 || status == 503 || status == 504) {
		retry = true;
		s->st.failures++;
	} else {
		LOG_ONCE(LOG_LEVEL_WARN, "otlp: %s answered HTTP %ld; dropping that payload", s->url, status);
		s->st.rejected++;
		q_pop(s);
	}
	if (retry) {
		s->st.retries++;
		s->backoff_ms = s->backoff_ms ? s->backoff_ms * 2 : s->backoff_initial_ms;
		if (s->backoff_ms > s->backoff_max_ms)
			s->backoff_ms = s->backoff_max_ms;
		int64_t wait = s->backoff_ms;
		if (retry_after > 0 && retry_after * 1000 < s->backoff_max_ms * 4)
			wait = retry_after * 1000 > wait ? retry_after * 1000 : wait;
		s->in_backoff = true;
		ev_timer_set(s->retry_timer, wait * NS_PER_MS, 0);
		return;
	}
	start_next(s);
}

static void check_done(struct otlp_sink *s)
{
	CURLMsg *m;
	int left;
	while ((m = C->multi_info_read(s->multi, &left)))
		if (m->msg == CURLMSG_DONE && m->easy_handle == s->easy)
			finish(s, m->data.result);
}

static void start_next(struct otlp_sink *s)
{
	if (s->easy || s->in_backoff || !s->qlen)
		return;
	struct payload *p = &s->q[s->qhead];
	CURL *e = C->easy_init();
	if (!e) {
		LOG_ONCE(LOG_LEVEL_ERROR, "otlp: curl_easy_init failed");
		return;
	}
	C->easy_setopt(e, CURLOPT_URL, s->url);
	C->easy_setopt(e, CURLOPT_POST, 1L);
	C->easy_setopt(e, CURLOPT_POSTFIELDS, p->data);
	C->easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)p->len);
	C->easy_setopt(e, CURLOPT_HTTPHEADER, s->headers);
	C->easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)s->timeout_ms);
	C->easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)s->timeout_ms);
	C->easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	C->easy_setopt(e, CURLOPT_WRITEFUNCTION, discard);
	C->easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	C->easy_setopt(e, CURLOPT_USERAGENT, "dynolog/" DYNO_VERSION);
	s->easy = e;
	if (C->multi_add_handle(s->multi, e) != CURLM_OK) {
		C->easy_cleanup(e);
		s->easy = NULL;
		LOG_ONCE(LOG_LEVEL_ERROR, "otlp: curl_multi_add_handle failed");
	}
}

static void on_retry(struct ev_loop *l, struct ev_timer *t, void *ud)
{
	(void)l;
	(void)t;
	struct otlp_sink *s = ud;
	s->in_backoff = false;
	start_next(s);
}

static void on_curl_timer(struct ev_loop *l, struct ev_timer *t, void *ud)
{
	(void)l;
	(void)t;
	struct otlp_sink *s = ud;
	C->multi_socket_action(s->multi, CURL_SOCKET_TIMEOUT, 0, &s->running);
	check_done(s);
}

static void on_curl_io(struct ev_loop *l, int fd, uint32_t events, void *ud)
{
	(void)l;
	struct otlp_sink *s = ud;
	int mask = 0;
	if (events & EPOLLIN)
		mask |= CURL_CSELECT_IN;
	if (events & EPOLLOUT)
		mask |= CURL_CSELECT_OUT;
	if (events & (EPOLLERR | EPOLLHUP))
		mask |= CURL_CSELECT_ERR;
	C->multi_socket_action(s->multi, fd, mask, &s->running);
	check_done(s);
}

static int sock_cb(CURL *e, curl_socket_t fd, int what, void *userp, void *socketp)
{
	(void)e;
	struct otlp_sink *s = userp;
	if (what == CURL_POLL_REMOVE) {
		if (socketp)
			ev_io_del(s->loop, fd);
		C->multi_assign(s->multi, fd, NULL);
		return 0;
	}
	uint32_t ev = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);
	if (socketp) {
		ev_io_mod(s->loop, fd, ev);
	} else if (ev_io_add(s->loop, fd, ev, on_curl_io, s) == 0) {
		C->multi_assign(s->multi, fd, s);
	}
	return 0;
}

static int timer_cb(CURLM *m, long ms, void *userp)
{
	(void)m;
	struct otlp_sink *s = userp;
	if (ms < 0)
		ev_timer_disarm(s->curl_timer);
	else
		ev_timer_set(s->curl_timer, ms == 0 ? 1 : (int64_t)ms * NS_PER_MS, 0);
	return 0;
}

void otlp_options_from_env(struct otlp_options *o)
{
	const char *v;
	if (!o->metrics_url && (v = getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")) && *v)
		o->metrics_url = v;
	if (!o->endpoint && (v = getenv("OTEL_EXPORTER_OTLP_ENDPOINT")) && *v)
		o->endpoint = v;
	if (!o->headers && (v = getenv("OTEL_EXPORTER_OTLP_METRICS_HEADERS")) && *v)
		o->headers = v;
	if (!o->headers && (v = getenv("OTEL_EXPORTER_OTLP_HEADERS")) && *v)
		o->headers = v;
	if (!o->service_name && (v = getenv("OTEL_SERVICE_NAME")) && *v)
		o->service_name = v;
	if (!o->timeout_ms && (v = getenv("OTEL_EXPORTER_OTLP_TIMEOUT")) && *v)
		o->timeout_ms = strtoll(v, NULL, 10);
	if (!o->endpoint)
		o->endpoint = "http://localhost:4318";
	if (!o->service_name)
		o->service_name = "dynolog";
	if (o->timeout_ms <= 0)
		o->timeout_ms = 10000;
	if (!o->max_queue)
		o->max_queue = 1000;
	if (!o->max_queue_bytes)
		o->max_queue_bytes = OTLP_DEFAULT_QUEUE_BYTES;
	if (o->backoff_initial_ms <= 0)
		o->backoff_initial_ms = 1000;
	if (o->backoff_max_ms <= 0)
		o->backoff_max_ms = 60000;
}

struct otlp_sink *otlp_new(struct ev_loop *loop, const struct otlp_options *opt, struct buf *err)
{
	if (!(C = curl_api(err)))
		return NULL;
	struct otlp_options o = *opt;
	otlp_options_from_env(&o);
	struct otlp_sink *s = xcalloc(1, sizeof *s);
	s->loop = loop;
	if (o.metrics_url) {
		s->url = xstrdup(o.metrics_url);
	} else {
		size_t l = strlen(o.endpoint);
		while (l && o.endpoint[l - 1] == '/')
			l--;
		struct buf u = BUF_INIT;
		buf_printf(&u, "%.*s/v1/metrics", (int)l, o.endpoint);
		s->url = buf_detach(&u, NULL);
	}
	if (strncmp(s->url, "http://", 7) != 0 && strncmp(s->url, "https://", 8) != 0) {
		buf_printf(err, "OTLP endpoint '%s' is not an http:// or https:// URL", s->url);
		free(s->url);
		free(s);
		return NULL;
	}
	s->service = xstrdup(o.service_name);
	if (gethostname(s->host, sizeof s->host - 1) != 0)
		snprintf(s->host, sizeof s->host, "unknown");
	s->timeout_ms = o.timeout_ms;
	s->backoff_initial_ms = o.backoff_initial_ms;
	s->backoff_max_ms = o.backoff_max_ms;
	s->qcap = o.max_queue;
	s->max_bytes = o.max_queue_bytes;
	s->q = xcalloc(s->qcap, sizeof *s->q);
	s->headers = C->slist_append(NULL, "Content-Type: application/json");
	s->headers = C->slist_append(s->headers, "Expect:"); /* no 100-continue round trip */
	if (o.headers) {
		/* "k=v,k2=v2" -> "k: v" (values may be URL-encoded per the spec; passed as given) */
		const char *p = o.headers;
		while (*p) {
			const char *c = strchr(p, ',');
			size_t l = c ? (size_t)(c - p) : strlen(p);
			const char *eq = memchr(p, '=', l);
			if (eq && eq > p && !memchr(p, '\n', l) && !memchr(p, '\r', l)) {
				struct buf h = BUF_INIT;
				buf_printf(&h, "%.*s: %.*s", (int)(eq - p), p, (int)(l - (size_t)(eq - p) - 1), eq + 1);
				s->headers = C->slist_append(s->headers, h.data);
				buf_free(&h);
			} else if (l) {
				log_warn("otlp: ignoring malformed header entry '%.*s' (want key=value)", (int)l, p);
			}
			if (!c)
				break;
			p = c + 1;
		}
	}
	s->multi = C->multi_init();
	s->curl_timer = ev_timer_add(loop, 0, 0, on_curl_timer, s);
	s->retry_timer = ev_timer_add(loop, 0, 0, on_retry, s);
	if (s->curl_timer)
		ev_timer_disarm(s->curl_timer);
	if (s->retry_timer)
		ev_timer_disarm(s->retry_timer);
	if (!s->multi || !s->curl_timer || !s->retry_timer) {
		buf_puts(err, "cannot set up the OTLP client");
		otlp_free(s);
		return NULL;
	}
	C->multi_setopt(s->multi, CURLMOPT_SOCKETFUNCTION, sock_cb);
	C->multi_setopt(s->multi, CURLMOPT_SOCKETDATA, s);
	C->multi_setopt(s->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
	C->multi_setopt(s->multi, CURLMOPT_TIMERDATA, s);
	return s;
}

void otlp_free(struct otlp_sink *s)
{
	if (!s)
		return;
	if (s->easy) {
		C->multi_remove_handle(s->multi, s->easy);
		C->easy_cleanup(s->easy);
	}
	if (s->multi)
		C->multi_cleanup(s->multi);
	if (s->curl_timer)
		ev_timer_del(s->loop, s->curl_timer);
	if (s->retry_timer)
		ev_timer_del(s->loop, s->retry_timer);
	while (s->qlen)
		q_pop(s);
	free(s->q);
	C->slist_free_all(s->headers);
	free(s->url);
	free(s->service);
	free(s->prev_ns);
	free(s);
}

/* Drop the oldest payload that is not being sent right now; false when
 * there is none (empty, or only the one in flight). */
static bool drop_oldest(struct otlp_sink *s)
{
	if (!s->qlen || (s->easy && s->qlen == 1))
		return false;
	size_t victim = s->easy ? (s->qhead + 1) % s->qcap : s->qhead;
	s->qbytes -= s->q[victim].len;
	free(s->q[victim].data);
	if (victim != s->qhead) /* close the gap: move the in-flight head forward one slot */
		s->q[victim] = s->q[s->qhead];
	s->q[s->qhead].data = NULL;
	s->qhead = (s->qhead + 1) % s->qcap;
	s->qlen--;
	s->st.dropped++;
	return true;
}

void otlp_publish(struct otlp_sink *s, size_t src, const struct frame *f)
{
	if (src >= s->nsrc) {
		s->prev_ns = xrealloc(s->prev_ns, (src + 1) * sizeof *s->prev_ns);
		memset(s->prev_ns + s->nsrc, 0, (src + 1 - s->nsrc) * sizeof *s->prev_ns);
		s->nsrc = src + 1;
	}
	if (s->qlen == s->qcap) {
		if (!drop_oldest(s)) {
			s->st.dropped++; /* queue of one, busy: drop the new one instead */
			return;
		}
		LOG_ONCE(LOG_LEVEL_WARN, "otlp: queue full (%zu payloads); dropping the oldest", s->qcap);
	}
	struct buf b = BUF_INIT;
	otlp_render(f, s->prev_ns[src], s->service, s->host, &b);
	s->prev_ns[src] = f->wall_ns;
	/* the bytes held are capped too: payloads of a big host are large, and
	 * a long outage must not take the daemon past its memory limit */
	while (s->qbytes + b.len > s->max_bytes && drop_oldest(s))
		LOG_ONCE(LOG_LEVEL_WARN, "otlp: queue full (%zu bytes); dropping the oldest", s->max_bytes);
	if (s->qbytes + b.len > s->max_bytes) {
		/* bigger than what the queue may hold besides the one in flight */
		LOG_ONCE(LOG_LEVEL_WARN, "otlp: a %zu-byte payload does not fit the queue's %zu bytes; dropped", b.len,
			 s->max_bytes);
		s->st.dropped++;
		buf_free(&b);
		return;
	}
	struct payload *p = &s->q[(s->qhead + s->qlen) % s->qcap];
	p->data = buf_detach(&b, &p->len);
	s->qbytes += p->len;
	s->qlen++;
	start_next(s);
}

void otlp_get_stats(const struct otlp_sink *s, struct otlp_stats *st)
{
	*st = s->st;
	st->queued = s->qlen;
	st->queued_bytes = s->qbytes;
}

/* ---------------- the sink table's row (publish/list.h) ---------------- */

struct otlp_config {
	bool use;
	const char *endpoint, *headers, *service;
	int64_t timeout_ms, max_queue, max_queue_bytes;
};

#define O(field, name, type, mv, help, lo, hi) MOD_OPT(struct otlp_config, field, name, type, mv, help, lo, hi)
static const struct arg_opt otlp_opts[] = {
	O(use, "use_otlp", ARG_BOOL, NULL, "push metrics as OTLP/HTTP JSON", 0, 0),
	O(endpoint, "otlp_endpoint", ARG_STRING, "URL",
	  "OTLP base URL (default $OTEL_EXPORTER_OTLP_ENDPOINT or http://localhost:4318)", 0, 0),
	O(headers, "otlp_headers", ARG_STRING, "K=V,...", "extra HTTP headers (default $OTEL_EXPORTER_OTLP_HEADERS)",
	  0, 0),
	O(service, "otlp_service_name", ARG_STRING, "NAME", "OTLP resource service.name (default dynolog)", 0, 0),
	O(timeout_ms, "otlp_timeout_ms", ARG_INT, "MS", "OTLP request timeout", 1, 600000),
	O(max_queue, "otlp_max_queue_size", ARG_INT, "N",
	  "OTLP payloads kept while the receiver is slow or down; the oldest is dropped beyond", 1, 1000000),
	O(max_queue_bytes, "otlp_max_queue_bytes", ARG_INT, "BYTES",
	  "memory those payloads may take; the oldest is dropped beyond", 1024, INT64_C(1) << 40),
	{0},
};
#undef O

/* "": from the OTEL_* environment, else the OTLP defaults (otlp_options_from_env) */
static const struct otlp_config otlp_defaults = {false, "", "", "", 10000, 1000, OTLP_DEFAULT_QUEUE_BYTES};

static bool otlp_enabled(const void *cfg) { return ((const struct otlp_config *)cfg)->use; }

static bool otlp_apply(void **state, const void *old, const void *cfg, const struct sink_env *env,
		       struct buf *err)
{
	const struct otlp_config *n = cfg;
	if (*state) {
		bool same = true;
		for (const struct arg_opt *o = otlp_opts; o->name && same; o++)
			same = !mod_opt_changed(o, old, cfg);
		if (same)
			return true;
		/* a new client; the old queue is dropped */
		otlp_free(*state);
		*state = NULL;
	}
	struct otlp_options oo = {0};
	oo.endpoint = *n->endpoint ? n->endpoint : NULL;
	oo.headers = *n->headers ? n->headers : NULL;
	oo.service_name = *n->service ? n->service : NULL;
	oo.timeout_ms = n->timeout_ms;
	oo.max_queue = (size_t)n->max_queue;
	oo.max_queue_bytes = (size_t)n->max_queue_bytes;
	if (!(*state = otlp_new(env->loop, &oo, err)))
		return false;
	log_info("pushing OTLP metrics (queue of %lld, at most %lld bytes)", (long long)n->max_queue,
		 (long long)n->max_queue_bytes);
	return true;
}

static void otlp_sink_publish(void *state, size_t src, struct frame *f, const struct self_metrics *self)
{
	(void)self;
	otlp_publish(state, src, f);
}

static void otlp_stats(void *state, struct self_metrics *out)
{
	struct otlp_stats st;
	otlp_get_stats(state, &st);
	self_add(out, "dynolog_otlp_dropped_total", "OTLP payloads dropped (queue full).", "counter", NULL, NULL,
		 (double)st.dropped);
	self_add(out, "dynolog_otlp_queue_length", "OTLP payloads waiting.", "gauge", NULL, NULL, (double)st.queued);
	self_add(out, "dynolog_otlp_sent_total", "OTLP payloads accepted by the receiver.", "counter", NULL, NULL,
		 (double)st.sent);
}

static void otlp_close(void *state) { otlp_free(state); }

static void otlp_describe(const void *cfg, struct buf *out)
{
	(void)cfg;
	buf_puts(out, ", OTLP");
}

const struct sink sink_otlp = {
	.name = "otlp",
	.config = {otlp_opts, sizeof(struct otlp_config), &otlp_defaults},
	.enabled = otlp_enabled,
	.apply = otlp_apply,
	.publish = otlp_sink_publish,
	.stats = otlp_stats,
	.close = otlp_close,
	.describe = otlp_describe,
};
