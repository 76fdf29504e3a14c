/* tracing.c - see tracing.h. */
#include "tracing.h"

#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/net.h"
#include "daemon/ipc.h"
#include "daemon/ipc_wire.h"
#include "daemon/registry.h"
#include "daemon/rpc_tracing.h"
#include "daemon/security.h"

struct tracing {
	struct registry reg;
	struct path_policy policy;
	struct rpc_tracing handlers;
	struct rpc_server *rpc;
	struct ipc_endpoint *ipc;
};

struct tracing *tracing_start(struct ev_loop *l, const struct tracing_flags *f, struct buf *err)
{
	struct tracing *t = xcalloc(1, sizeof *t);
	registry_init(&t->reg, (size_t)f->max_procs);
	char *token = NULL;
	if (!sec_flag_not_empty("rpc_allow", f->rpc_allow_seen, f->rpc_allow, err) ||
	    !sec_flag_not_empty("trace_path_prefixes", f->trace_prefixes_seen, f->trace_prefixes, err) ||
	    !sec_flag_not_empty("rpc_token_file", f->token_file_seen, f->token_file, err))
		goto fail;
	if (!path_policy_parse(&t->policy, f->trace_prefixes, err))
		goto fail;
	if (f->token_file && *f->token_file && !sec_load_token(f->token_file, &token, err))
		goto fail;
	t->handlers.reg = &t->reg;
	t->handlers.policy = &t->policy;
	if (f->enable_ipc) {
		struct ipc_opts io = {.name = f->ipc_name, .dir = f->ipc_dir ? f->ipc_dir : ipc_env_dir(),
				      .expiry_s = f->expiry_s};
		t->ipc = ipc_start(l, &t->reg, &io, err);
		if (!t->ipc)
			goto fail;
	}
	if (f->enable_rpc) {
		struct rpc_opts ro = {.bind = f->rpc_bind, .port = (int)f->port, .allow = f->rpc_allow, .token = token,
				      .max_frame = (uint32_t)f->rpc_max_frame, .timeout_ms = (int)f->rpc_timeout_ms,
				      .max_requests = (uint32_t)f->rpc_max_requests};
		struct buf rerr = BUF_INIT;
		/* A bad allow-list is a configuration error; a busy port is not
		 * fatal (upstream logs and runs without RPC). */
		struct net_acl probe;
		if (!net_acl_parse(&probe, f->rpc_allow, err))
			goto fail;
		net_acl_free(&probe);
		t->rpc = rpc_start(l, &ro, &rerr);
		if (!t->rpc)
			log_error("RPC server not started (port %lld): %s", (long long)f->port, rerr.data);
		else
			rpc_tracing_register(t->rpc, &t->handlers);
		buf_free(&rerr);
	}
	free(token);
	return t;
fail:
	free(token);
	tracing_stop(t);
	return NULL;
}

void tracing_stop(struct tracing *t)
{
	if (!t)
		return;
	if (t->rpc) {
		const struct rpc_stats *s = rpc_get_stats(t->rpc);
		log_info("RPC: %llu connections, %llu answered, %llu unanswered, %llu bad frames, %llu oversized, "
			 "%llu timeouts, %llu evicted, %llu refused peers, %llu unauthorized, %llu keep-alive requests",
			 (unsigned long long)s->accepted, (unsigned long long)s->answered,
			 (unsigned long long)s->silent, (unsigned long long)s->bad_frame,
			 (unsigned long long)s->too_big, (unsigned long long)s->timeouts, (unsigned long long)s->evicted,
			 (unsigned long long)s->refused_peer, (unsigned long long)s->unauthorized,
			 (unsigned long long)s->reused);
	}
	if (t->ipc) {
		const struct ipc_stats *s = ipc_get_stats(t->ipc);
		log_info("IPC: %llu datagrams (%llu req, %llu ctxt), %llu malformed, %llu unknown type, "
			 "%llu foreign, %llu replies, %llu replies failed",
			 (unsigned long long)s->datagrams, (unsigned long long)s->req, (unsigned long long)s->ctxt,
			 (unsigned long long)s->malformed, (unsigned long long)s->unknown,
			 (unsigned long long)s->foreign, (unsigned long long)s->replies,
			 (unsigned long long)s->reply_failed);
	}
	rpc_stop(t->rpc);
	ipc_stop(t->ipc);
	path_policy_free(&t->policy);
	registry_free(&t->reg);
	free(t);
}

struct rpc_server *tracing_rpc(struct tracing *t) { return t ? t->rpc : NULL; }

void tracing_on_new_process(struct tracing *t, ipc_new_proc_fn fn, void *ud)
{
	if (t->ipc)
		ipc_on_new_process(t->ipc, fn, ud);
}
