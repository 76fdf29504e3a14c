/* tracing.c - see tracing.h. */
#include "tracing.h"

#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/log.h"
#include "daemon/ipc/ipc.h"
#include "daemon/ipc/ipc_wire.h"
#include "daemon/ipc/registry.h"
#include "daemon/rpc/rpc_tracing.h"
#include "daemon/rpc/security.h"

struct tracing {
	struct registry reg;
	struct path_policy policy;
	struct rpc_tracing handlers;
	struct ipc_endpoint *ipc;
};

struct tracing *tracing_start(struct ev_loop *l, const struct tracing_flags *f, struct buf *err)
{
	struct tracing *t = xcalloc(1, sizeof *t);
	registry_init(&t->reg, (size_t)f->max_procs);
	if (!sec_flag_not_empty("trace_path_prefixes", f->trace_prefixes_seen, f->trace_prefixes, err))
		goto fail;
	if (!path_policy_parse(&t->policy, f->trace_prefixes, err))
		goto fail;
	t->handlers.reg = &t->reg;
	t->handlers.policy = &t->policy;
	if (f->enable_ipc) {
		struct ipc_filter_opts fo = {.uid_rate = f->rate_uid, .uid_burst = f->burst_uid,
					     .proc_rate = f->rate_proc, .proc_burst = f->burst_proc};
		struct ipc_opts io = {.name = f->ipc_name, .dir = f->ipc_dir ? f->ipc_dir : ipc_env_dir(),
				      .expiry_s = f->expiry_s, .filter = f->bpf_filter ? &fo : NULL};
		if (!f->bpf_filter)
			log_info("IPC: running without the datagram budget per user: not enabled (--ipc_bpf_filter=off)");
		t->ipc = ipc_start(l, &t->reg, &io, err);
		if (!t->ipc)
			goto fail;
		t->handlers.ipc = t->ipc;
	}
	return t;
fail:
	tracing_stop(t);
	return NULL;
}

void tracing_stop(struct tracing *t)
{
	if (!t)
		return;
	if (t->ipc) {
		const struct ipc_stats *s = ipc_get_stats(t->ipc);
		log_info("IPC: %llu datagrams (%llu req, %llu ctxt), %llu malformed, %llu unknown type, "
			 "%llu foreign, %llu replies, %llu replies failed",
			 (unsigned long long)s->datagrams, (unsigned long long)s->req, (unsigned long long)s->ctxt,
			 (unsigned long long)s->malformed, (unsigned long long)s->unknown,
			 (unsigned long long)s->foreign, (unsigned long long)s->replies,
			 (unsigned long long)s->reply_failed);
	}
	ipc_stop(t->ipc);
	path_policy_free(&t->policy);
	registry_free(&t->reg);
	free(t);
}

void tracing_register_rpc(struct tracing *t, struct rpc_server *s)
{
	if (s)
		rpc_tracing_register(s, &t->handlers);
}

struct registry *tracing_registry(struct tracing *t) { return &t->reg; }

bool tracing_on_demand(struct tracing *t, const struct json_value *req, struct buf *resp)
{
	if (!t->handlers.now_ns)
		t->handlers.now_ns = clock_mono_ns; /* set by rpc_tracing_register when RPC is on */
	return rpc_set_on_demand(req, resp, &t->handlers);
}

bool tracing_check_config(const struct tracing *t, const char *config, size_t len, struct buf *why)
{
	if (t->reg.max_config && len > t->reg.max_config) {
		buf_printf(why, "config is %zu bytes; a process can receive at most %zu bytes in one datagram", len,
			   t->reg.max_config);
		return false;
	}
	return path_policy_check(&t->policy, config, len, why);
}

bool tracing_check_path(const struct tracing *t, const char *path, size_t len, struct buf *why)
{
	return path_policy_check_path(&t->policy, path, len, why);
}

void tracing_on_new_process(struct tracing *t, ipc_new_proc_fn fn, void *ud)
{
	if (t->ipc)
		ipc_on_new_process(t->ipc, fn, ud);
}
