/*
 * calls.c - see calls.h.  The table of sync stacks doubles when half full;
 * stack ids are small integers (indexes in the BPF stack map), hashed by a
 * multiply-shift all the same, as a record's bytes are not trusted.
 */
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "gpusnoop/calls.h"

void calls_init(struct calls *c)
{
	memset(c, 0, sizeof(*c));
	c->cap = 64;
	c->g = xcalloc(c->cap, sizeof(*c->g));
}

void calls_free(struct calls *c)
{
	free(c->g);
	c->g = NULL;
}

static size_t slot(size_t cap, int32_t id)
{
	return (size_t)(((uint64_t)(uint32_t)id * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

static struct sync_group *find(struct sync_group *g, size_t cap, int32_t id)
{
	for (size_t s = slot(cap, id);; s = (s + 1) & (cap - 1))
		if (!g[s].count || g[s].stack_id == id)
			return &g[s];
}

/* room for one more group: doubles when half full */
static void reserve(struct calls *c)
{
	if (2 * (c->n + 1) > c->cap) {
		size_t cap = c->cap * 2;
		struct sync_group *g = xcalloc(cap, sizeof(*g));
		for (size_t i = 0; i < c->cap; i++)
			if (c->g[i].count)
				*find(g, cap, c->g[i].stack_id) = c->g[i];
		free(c->g);
		c->g = g;
		c->cap = cap;
	}
}

int calls_sync_event(struct calls *c, const void *data, size_t len, struct snoop_event *out)
{
	struct snoop_event ev;
	if (len != sizeof(ev)) {
		c->invalid++;
		return -1;
	}
	memcpy(&ev, data, sizeof(ev));
	if (ev.type != EV_SYNC || ev.fn < FN_CUDA_DEVICE_SYNCHRONIZE || ev.fn > FN_CUDA_EVENT_SYNCHRONIZE) {
		c->invalid++;
		return -1;
	}
	if (ev.stack_id < 0)
		ev.stack_id = -1;
	reserve(c);
	struct sync_group *g = find(c->g, c->cap, ev.stack_id);
	if (!g->count) {
		g->stack_id = ev.stack_id;
		c->n++;
	}
	g->count++;
	g->fn_mask |= 1u << ev.fn;
	/* durations come from the kernel's clock, but the bytes are checked all the same: no wrap */
	g->total_ns = g->total_ns > UINT64_MAX - ev.size ? UINT64_MAX : g->total_ns + ev.size;
	if (ev.size > g->max_ns)
		g->max_ns = ev.size;
	c->sync_records++;
	c->sync_ns = c->sync_ns > UINT64_MAX - ev.size ? UINT64_MAX : c->sync_ns + ev.size;
	if (out)
		*out = ev;
	return 1;
}

void calls_sync_reset(struct calls *c)
{
	memset(c->g, 0, c->cap * sizeof(*c->g));
	c->n = 0;
	c->sync_records = c->sync_ns = 0;
}

static uint64_t add_sat(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

int calls_sync_group(struct calls *c, const struct sync_group *in)
{
	uint32_t syncs = (1u << FN_CUDA_DEVICE_SYNCHRONIZE) | (1u << FN_CUDA_STREAM_SYNCHRONIZE) |
			 (1u << FN_CUDA_EVENT_SYNCHRONIZE);
	if (in->stack_id < -1 || !in->count || !in->fn_mask || (in->fn_mask & ~syncs)) {
		c->invalid++;
		return -1;
	}
	reserve(c);
	struct sync_group *g = find(c->g, c->cap, in->stack_id);
	if (!g->count) {
		g->stack_id = in->stack_id;
		c->n++;
	}
	/* one group per stack id in the kernel's map; merged all the same */
	g->count = add_sat(g->count, in->count);
	g->fn_mask |= in->fn_mask;
	g->total_ns = add_sat(g->total_ns, in->total_ns);
	if (in->max_ns > g->max_ns)
		g->max_ns = in->max_ns;
	c->sync_records = add_sat(c->sync_records, in->count);
	c->sync_ns = add_sat(c->sync_ns, in->total_ns);
	return 1;
}

static int by_count(const void *a, const void *b)
{
	const struct sync_group *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	return x->stack_id < y->stack_id ? -1 : x->stack_id > y->stack_id;
}

struct sync_group *calls_sync_top(const struct calls *c, size_t *n)
{
	struct sync_group *out = xcalloc(c->n ? c->n : 1, sizeof(*out));
	size_t k = 0;
	for (size_t i = 0; i < c->cap; i++)
		if (c->g[i].count)
			out[k++] = c->g[i];
	qsort(out, k, sizeof(*out), by_count);
	*n = k;
	return out;
}

uint64_t calls_sum(const struct calls *c, uint32_t fn_first, uint32_t fn_last)
{
	uint64_t t = 0;
	for (uint32_t f = fn_first; f <= fn_last && f < FN_COUNT; f++)
		t += c->count[f];
	return t;
}
