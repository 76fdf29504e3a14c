/*
 * telemetry.c - host telemetry: the collector and sink tables on the loop
 * (see telemetry.h).  Nothing here knows a particular collector or sink.
 *
 * Modules are numbered collectors first, then sinks, then telemetry's own
 * settings; each has a config instance described by its option rows
 * (module.h).  Configuration precedence: command line > config file >
 * defaults; the config file (--config, config.c) is read again on SIGHUP
 * and the result applied module by module, each applying only what changed
 * (a module switched off is closed; the collectors are reopened when
 * --procfs_root/--sysfs_root change).  A config that does not parse or
 * validate is rejected whole and the running configuration kept.
 *
 * Timers: one per collector with a period; a collector without one rides
 * in the tick of the collector it names (the tracked processes go in the
 * kernel tick's frame).  The first collector's tick is the main one
 * (--exit_after_ticks counts it).  A tick costs the collectors' reads, one
 * frame, and each enabled sink's publish(); sinks never block.
 */
#include "telemetry.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/log.h"
#include "daemon/collect/collector.h"
#include "daemon/config.h"
#include "daemon/frame.h"
#include "daemon/publish/process_self.h"
#include "daemon/publish/sink.h"
#include "daemon/rpc/rpc.h"
#include "daemon/sdnotify.h"

/* ---------------- telemetry's own settings ---------------- */

struct own_config {
	const char *procfs_root, *sysfs_root, *config_file;
	int64_t exit_after_ticks;
	/* upstream flags accepted so existing unit files keep working
	 * (enable_gpu_monitor and dcgm_reporting_interval_s: collect/nvml.c;
	 * dcgm_fields: collect/dcgm.c) */
	bool compat_bool[5];
	int64_t compat_int;
	const char *compat_str[2];
};

#define T(field, name, type, mv, help, lo, hi) MOD_OPT(struct own_config, field, name, type, mv, help, lo, hi)
#define COMPAT "upstream compatibility; ignored"
static const struct arg_opt own_opts[] = {
	T(procfs_root, "procfs_root", ARG_STRING, "DIR", "where procfs is mounted (tests use fixture trees)", 0, 0),
	T(sysfs_root, "sysfs_root", ARG_STRING, "DIR", "where sysfs is mounted", 0, 0),
	T(config_file, "config", ARG_STRING, "FILE",
	  "JSON config file {\"flag_name\": value, ...}; re-read on SIGHUP; the command line wins", 0, 0),
	T(exit_after_ticks, "exit_after_ticks", ARG_INT, "N", "stop after N kernel ticks (0: run forever)", 0,
	  1000000000),
	/* upstream flags we accept and ignore (Meta-internal sinks, DCGM) */
	T(compat_bool[0], "use_ODS", ARG_BOOL, NULL, COMPAT, 0, 0),
	T(compat_bool[1], "use_scuba", ARG_BOOL, NULL, COMPAT, 0, 0),
	T(compat_bool[2], "use_fbrelay", ARG_BOOL, NULL, COMPAT, 0, 0),
	T(compat_bool[4], "enable_env_var_attribution", ARG_BOOL, NULL, COMPAT, 0, 0),
	T(compat_str[0], "dcgm_lib_path", ARG_STRING, "PATH", COMPAT, 0, 0),
	T(compat_str[1], "scribe_category", ARG_STRING, "NAME", COMPAT, 0, 0),
	{0},
};
#undef T
#undef COMPAT

static const struct own_config own_defaults = {"/proc", "/sys", "", 0, {false}, 10, {"", ""}};
static const struct mod_config own_mod = {own_opts, sizeof(struct own_config), &own_defaults};

/* ---------------- modules and their configs ---------------- */

static size_t nmods(void) { return ncollectors + nsinks + 1; }

static const struct mod_config *mod(size_t m)
{
	if (m < ncollectors)
		return &collectors[m]->config;
	if (m < ncollectors + nsinks)
		return &sinks[m - ncollectors]->config;
	return &own_mod;
}

#define OWN(cfgs) ((const struct own_config *)(cfgs)[ncollectors + nsinks])

struct telemetry_config {
	void **cfg;          /* per module, filled by the parser (strings borrowed) */
	size_t *first;       /* per module: index of its first row */
	struct arg_opt *opts; /* all rows, {NULL}-terminated */
	bool *seen;          /* per row: given */
	size_t nopts;
};

struct telemetry_config *telemetry_config_new(void)
{
	struct telemetry_config *c = xcalloc(1, sizeof *c);
	size_t n = 0;
	for (size_t m = 0; m < nmods(); m++)
		n += mod_rows_count(mod(m));
	c->cfg = xcalloc(nmods(), sizeof *c->cfg);
	c->first = xcalloc(nmods(), sizeof *c->first);
	c->opts = xcalloc(n + 1, sizeof *c->opts);
	c->seen = xcalloc(n ? n : 1, sizeof *c->seen);
	for (size_t m = 0; m < nmods(); m++) {
		c->cfg[m] = mod_config_new(mod(m));
		c->first[m] = c->nopts;
		c->nopts += mod_rows_bind(mod(m), c->cfg[m], c->opts + c->nopts, c->seen + c->nopts);
	}
	return c;
}

void telemetry_config_free(struct telemetry_config *c)
{
	if (!c)
		return;
	for (size_t m = 0; m < nmods(); m++)
		free(c->cfg[m]); /* strings borrowed */
	free(c->cfg);
	free(c->first);
	free(c->opts);
	free(c->seen);
	free(c);
}

const struct arg_opt *telemetry_opts(struct telemetry_config *c) { return c->opts; }

static bool validate(void *const *cfg, struct buf *err)
{
	for (size_t i = 0; i < ncollectors; i++)
		if (collectors[i]->validate && !collectors[i]->validate(cfg[i], err))
			return false;
	for (size_t i = 0; i < nsinks; i++)
		if (sinks[i]->validate && !sinks[i]->validate(cfg[ncollectors + i], err))
			return false;
	return true;
}

static void free_cfgs(void **cfg)
{
	if (!cfg)
		return;
	for (size_t m = 0; m < nmods(); m++)
		mod_config_free(mod(m), cfg[m]);
	free(cfg);
}

/* The effective config, every module's instance owning its strings: the
 * command line's values, and the config file's for every option the
 * command line did not give.  NULL with err. */
static void **build_config(const struct telemetry_config *cli, struct buf *err)
{
	void **out = xcalloc(nmods(), sizeof *out);
	for (size_t m = 0; m < nmods(); m++)
		out[m] = mod_config_clone(mod(m), cli->cfg[m]);
	const char *path = OWN(cli->cfg)->config_file;
	if (path && *path) {
		struct telemetry_config *fc = telemetry_config_new();
		struct config_argv av = {0};
		struct args fa;
		memset(&fa, 0, sizeof fa);
		bool ok = config_file_to_argv(path, fc->opts, &av, err);
		if (ok) {
			int rc = args_parse(fc->opts, av.argc, av.argv, &fa);
			if (rc != ARGS_OK) {
				buf_printf(err, "config file %s: %s", path, rc == ARGS_HELP ? "help requested" : fa.error.data);
				ok = false;
			}
		}
		for (size_t m = 0; ok && m < nmods(); m++)
			for (size_t i = 0; mod(m)->opts[i].name; i++)
				if (fc->seen[fc->first[m] + i] && !cli->seen[cli->first[m] + i])
					mod_opt_copy(&mod(m)->opts[i], out[m], fc->cfg[m]);
		args_free(&fa);
		config_argv_free(&av);
		telemetry_config_free(fc);
		if (!ok) {
			free_cfgs(out);
			return NULL;
		}
	}
	if (!validate(out, err)) {
		free_cfgs(out);
		return NULL;
	}
	return out;
}

bool telemetry_config_valid(const struct telemetry_config *cli, struct buf *err)
{
	void **cfg = build_config(cli, err);
	if (cfg)
		free_cfgs(cfg);
	return cfg != NULL;
}

bool telemetry_config_check(const char *text, size_t len, struct buf *err)
{
	struct telemetry_config *c = telemetry_config_new();
	struct config_argv av = {0};
	bool ok = config_text_to_argv("(text)", text, len, c->opts, &av, err);
	if (ok) {
		struct args a;
		int rc = args_parse(c->opts, av.argc, av.argv, &a);
		ok = rc == ARGS_OK && validate(c->cfg, err);
		if (rc != ARGS_OK)
			buf_puts(err, rc == ARGS_HELP ? "help requested" : a.error.data);
		args_free(&a);
	}
	config_argv_free(&av);
	telemetry_config_free(c);
	return ok;
}

/* ---------------- the running instance ---------------- */

struct cslot { /* one per collector */
	struct telemetry *t;
	size_t idx;
	void *cfg, *state; /* state NULL: not running */
	size_t owner;      /* the collector whose tick runs it (itself when it ticks) */
	struct ev_timer *timer;
	int64_t armed_s;   /* period the timer is armed with, 0: disarmed */
	double last_s;     /* duration of the last run */
	bool ok;
	uint64_t runs;
};

struct sslot { /* one per sink */
	struct telemetry *t;
	size_t idx;
	void *cfg, *state; /* state NULL: not running */
};

struct telemetry {
	struct ev_loop *loop;
	struct telemetry_config *cli; /* as given on the command line */
	struct own_config *own;       /* effective */
	struct cslot *cs;
	struct sslot *ss;
	struct frame frame;
	struct self_metrics self;
	int64_t ticks;
	telemetry_tick_fn on_tick;
	void *on_tick_ud;
};

static void self_metrics(struct telemetry *t)
{
	struct self_metrics *s = &t->self;
	s->n = 0;
	/* grouped by name: every collector's duration, then every success */
	for (size_t i = 0; i < ncollectors; i++)
		if (t->cs[i].runs)
			self_add(s, "dynolog_collector_duration_seconds", "Wall time of the last collection.", "gauge",
				 "collector", collectors[i]->name, t->cs[i].last_s);
	for (size_t i = 0; i < ncollectors; i++)
		if (t->cs[i].runs)
			self_add(s, "dynolog_collector_success", "1 if the last collection read its sources, 0 if not.",
				 "gauge", "collector", collectors[i]->name, t->cs[i].ok ? 1 : 0);
	for (size_t i = 0; i < nsinks; i++)
		if (t->ss[i].state && sinks[i]->stats)
			sinks[i]->stats(t->ss[i].state, s);
	/* the daemon's own process: always the live /proc, even when the
	 * collectors read a --procfs_root fixture */
	process_self_metrics(s, "/proc", (double)clock_cpu_ns() / 1e9);
}

static void publish(struct telemetry *t, size_t src)
{
	for (size_t i = 0; i < nsinks; i++) {
		if (!t->ss[i].state)
			continue;
		/* at this sink's turn: the sinks before it have counted this tick */
		if (sinks[i]->wants_self)
			self_metrics(t);
		sinks[i]->publish(t->ss[i].state, src, &t->frame, &t->self);
	}
}

static void on_tick(struct ev_loop *l, struct ev_timer *tm, void *ud)
{
	(void)tm;
	struct cslot *me = ud;
	struct telemetry *t = me->t;
	frame_reset(&t->frame, clock_wall_ns());
	for (size_t i = 0; i < ncollectors; i++) {
		struct cslot *c = &t->cs[i];
		if (c->owner != me->idx || !c->state)
			continue;
		int64_t t0 = clock_mono_ns();
		enum collect_status r = collectors[i]->collect(c->state, &t->frame);
		if (r == COLLECT_IDLE)
			continue;
		c->last_s = (double)(clock_mono_ns() - t0) / 1e9;
		c->ok = r == COLLECT_OK;
		c->runs++;
	}
	if (t->frame.n || collectors[me->idx]->publish_empty)
		publish(t, me->idx);
	if (t->on_tick)
		t->on_tick(&t->frame, me->idx, collectors[me->idx]->interval_s(me->cfg), t->on_tick_ud);
	if (me->idx == 0 && t->own->exit_after_ticks && ++t->ticks >= t->own->exit_after_ticks)
		ev_stop(l);
}

static bool collector_on(size_t i, const void *cfg) { return !collectors[i]->enabled || collectors[i]->enabled(cfg); }
static bool sink_on(size_t i, const void *cfg) { return !sinks[i]->enabled || sinks[i]->enabled(cfg); }

/* Apply cfg (owned; every instance is taken, or freed on failure): the
 * sinks first (a sink that cannot open is the usual failure: nothing else
 * has changed then), then the collectors, then the timers. */
static bool apply(struct telemetry *t, void **cfg, struct buf *err)
{
	bool ok = true;
	const struct own_config *own = OWN(cfg);
	/* the periods of the collectors that will tick, for the sinks (history) */
	int64_t *iv = xcalloc(ncollectors + 1, sizeof *iv);
	size_t niv = 0;
	for (size_t i = 0; i < ncollectors; i++)
		if (collectors[i]->interval_s && collector_on(i, cfg[i]))
			iv[niv++] = collectors[i]->interval_s(cfg[i]);
	struct sink_env senv = {t->loop, iv, niv};
	for (size_t i = 0; i < nsinks && ok; i++) {
		struct sslot *s = &t->ss[i];
		void **c = &cfg[ncollectors + i];
		if (!sink_on(i, *c)) {
			if (s->state)
				sinks[i]->close(s->state);
			s->state = NULL;
		} else if (!sinks[i]->apply(&s->state, s->state ? s->cfg : NULL, *c, &senv, err)) {
			ok = false;
			break;
		}
		mod_config_free(mod(ncollectors + i), s->cfg);
		s->cfg = *c;
		*c = NULL;
	}
	free(iv);
	/* collectors read the machine's files: new roots, new collectors */
	bool reopen = !t->own || strcmp(t->own->procfs_root, own->procfs_root) != 0 ||
		      strcmp(t->own->sysfs_root, own->sysfs_root) != 0;
	struct collect_env cenv = {own->procfs_root, own->sysfs_root};
	for (size_t i = 0; i < ncollectors && ok; i++) {
		struct cslot *s = &t->cs[i];
		void **c = &cfg[i];
		if (s->state && (reopen || !collector_on(i, *c))) {
			collectors[i]->close(s->state);
			s->state = NULL;
		}
		if (collector_on(i, *c) && !collectors[i]->apply(&s->state, s->state ? s->cfg : NULL, *c, &cenv, err)) {
			ok = false;
			break;
		}
		mod_config_free(mod(i), s->cfg);
		s->cfg = *c;
		*c = NULL;
	}
	/* timers: a collector switched on ticks right away (its first tick sets
	 * the baselines); a new period starts after one period */
	for (size_t i = 0; i < ncollectors && ok; i++) {
		struct cslot *s = &t->cs[i];
		if (!s->timer)
			continue;
		int64_t p = s->state ? collectors[i]->interval_s(s->cfg) : 0;
		if (!p)
			ev_timer_disarm(s->timer);
		else if (!s->armed_s)
			ev_timer_set(s->timer, 1, p * NS_PER_SEC);
		else if (s->armed_s != p)
			ev_timer_set(s->timer, p * NS_PER_SEC, p * NS_PER_SEC);
		s->armed_s = p;
	}
	if (ok) {
		for (size_t i = 0; i < 5; i++)
			if (own->compat_bool[i])
				LOG_ONCE(LOG_LEVEL_WARN, "ignoring upstream-only flags (Meta-internal sinks, DCGM): not supported");
		mod_config_free(&own_mod, t->own);
		t->own = (struct own_config *)own;
		cfg[ncollectors + nsinks] = NULL;
	}
	free_cfgs(cfg);
	return ok;
}

struct telemetry *telemetry_start(struct ev_loop *loop, const struct telemetry_config *cli, struct buf *err)
{
	struct telemetry *t = xcalloc(1, sizeof *t);
	t->loop = loop;
	/* a copy of the command line that owns its strings */
	t->cli = telemetry_config_new();
	for (size_t m = 0; m < nmods(); m++) {
		free(t->cli->cfg[m]);
		t->cli->cfg[m] = mod_config_clone(mod(m), cli->cfg[m]);
	}
	memcpy(t->cli->seen, cli->seen, cli->nopts * sizeof *cli->seen);
	frame_init(&t->frame);
	t->cs = xcalloc(ncollectors, sizeof *t->cs);
	t->ss = xcalloc(nsinks, sizeof *t->ss);
	bool timers_ok = true;
	for (size_t i = 0; i < ncollectors; i++) {
		struct cslot *s = &t->cs[i];
		s->t = t;
		s->idx = i;
		s->owner = i;
		if (collectors[i]->interval_s) {
			s->timer = ev_timer_add(loop, 0, 0, on_tick, s);
			if (s->timer)
				ev_timer_disarm(s->timer); /* armed by apply() */
			timers_ok = timers_ok && s->timer;
			continue;
		}
		s->owner = SIZE_MAX; /* rides on an earlier collector's tick */
		for (size_t j = 0; j < i; j++)
			if (collectors[i]->rides_on && strcmp(collectors[j]->name, collectors[i]->rides_on) == 0)
				s->owner = j;
	}
	for (size_t i = 0; i < nsinks; i++) {
		t->ss[i].t = t;
		t->ss[i].idx = i;
	}
	if (!timers_ok) {
		buf_printf(err, "cannot create timers: %s", strerror(errno));
		telemetry_stop(t);
		return NULL;
	}
	void **cfg = build_config(t->cli, err);
	if (!cfg || !apply(t, cfg, err)) {
		telemetry_stop(t);
		return NULL;
	}
	struct buf what = BUF_INIT;
	for (size_t i = 0; i < ncollectors; i++)
		if (t->cs[i].state && collectors[i]->describe)
			collectors[i]->describe(t->cs[i].cfg, &what);
	for (size_t i = 0; i < nsinks; i++)
		if (t->ss[i].state && sinks[i]->describe)
			sinks[i]->describe(t->ss[i].cfg, &what);
	log_info("telemetry: %s", what.len > 2 ? what.data + 2 : "nothing");
	buf_free(&what);
	sdnotify("READY=1");
	return t;
}

void telemetry_reload(struct telemetry *t)
{
	sdnotify("RELOADING=1");
	struct buf err = BUF_INIT;
	void **cfg = build_config(t->cli, &err);
	if (!cfg || !apply(t, cfg, &err))
		log_error("reload failed, keeping what runs: %s", err.data);
	else
		log_info("configuration reloaded");
	buf_free(&err);
	sdnotify("READY=1");
}

void telemetry_stop(struct telemetry *t)
{
	if (!t)
		return;
	sdnotify("STOPPING=1");
	for (size_t i = 0; i < nsinks; i++) {
		if (t->ss[i].state)
			sinks[i]->close(t->ss[i].state);
		mod_config_free(mod(ncollectors + i), t->ss[i].cfg);
	}
	for (size_t i = 0; i < ncollectors; i++) {
		if (t->cs[i].state)
			collectors[i]->close(t->cs[i].state);
		if (t->cs[i].timer)
			ev_timer_del(t->loop, t->cs[i].timer);
		mod_config_free(mod(i), t->cs[i].cfg);
	}
	mod_config_free(&own_mod, t->own);
	/* the command-line copy owns its strings */
	for (size_t m = 0; m < nmods(); m++) {
		mod_config_free(mod(m), t->cli->cfg[m]);
		t->cli->cfg[m] = NULL;
	}
	telemetry_config_free(t->cli);
	free(t->cs);
	free(t->ss);
	frame_free(&t->frame);
	self_metrics_free(&t->self);
	free(t);
}

void telemetry_on_tick(struct telemetry *t, telemetry_tick_fn fn, void *ud)
{
	t->on_tick = fn;
	t->on_tick_ud = ud;
}

bool telemetry_track_pid(struct telemetry *t, int pid)
{
	bool any = false;
	for (size_t i = 0; t && i < ncollectors; i++)
		if (t->cs[i].state && collectors[i]->track_pid && collectors[i]->track_pid(t->cs[i].state, pid))
			any = true;
	return any;
}

/* ---------------- RPC ---------------- */

static void sink_rpc(struct telemetry *t, size_t i, const struct json_value *req, struct buf *resp)
{
	if (!t || !t->ss[i].state) {
		buf_printf(resp, "{\"error\":\"%s: telemetry is not running\"}", sinks[i]->rpc_name);
		return;
	}
	sinks[i]->rpc(t->ss[i].state, req, resp);
}

bool telemetry_rpc_call(struct telemetry *t, const char *fn, const struct json_value *req, struct buf *resp)
{
	for (size_t i = 0; i < nsinks; i++)
		if (sinks[i]->rpc_name && strcmp(sinks[i]->rpc_name, fn) == 0) {
			sink_rpc(t, i, req, resp);
			return true;
		}
	return false;
}

static bool on_rpc(const struct json_value *req, struct buf *resp, void *ud)
{
	struct sslot *s = ud;
	sink_rpc(s->t, s->idx, req, resp);
	return true;
}

void telemetry_register_rpc(struct telemetry *t, struct rpc_server *srv)
{
	for (size_t i = 0; srv && i < nsinks; i++)
		if (sinks[i]->rpc_name)
			rpc_register_fn(srv, sinks[i]->rpc_name, on_rpc, &t->ss[i]);
}
