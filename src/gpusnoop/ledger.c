/*
 * ledger.c - see ledger.h.  A chained hash table that doubles when it holds
 * more entries than buckets; the hash is a multiply-shift of the pointer
 * (device pointers are aligned, so the low bits alone would collide).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "gpusnoop/ledger.h"

void ledger_init(struct ledger *l)
{
	memset(l, 0, sizeof(*l));
	l->last_dev_slot = -1;
	l->nbucket = 1024;
	l->bucket = xcalloc(l->nbucket, sizeof(*l->bucket));
}

void ledger_free(struct ledger *l)
{
	for (size_t i = 0; i < l->nbucket; i++)
		for (struct ledger_entry *e = l->bucket[i], *nx; e; e = nx) {
			nx = e->next;
			free(e);
		}
	free(l->bucket);
	l->bucket = NULL;
}

static size_t slot(const struct ledger *l, uint64_t ptr, uint64_t space)
{
	uint64_t h = (ptr ^ (space << 61)) * 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 32) & (l->nbucket - 1);
}

static void grow(struct ledger *l)
{
	size_t old = l->nbucket;
	struct ledger_entry **ob = l->bucket;
	l->nbucket = old * 2;
	l->bucket = xcalloc(l->nbucket, sizeof(*l->bucket));
	for (size_t i = 0; i < old; i++)
		for (struct ledger_entry *e = ob[i], *nx; e; e = nx) {
			nx = e->next;
			size_t s = slot(l, e->ptr, e->space);
			e->next = l->bucket[s];
			l->bucket[s] = e;
		}
	free(ob);
}

static uint64_t clamp64(unsigned __int128 v) { return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v; }

/* unlink and return the live entry for (ptr, space), or NULL */
static struct ledger_entry *take(struct ledger *l, uint64_t ptr, uint64_t space)
{
	for (struct ledger_entry **pp = &l->bucket[slot(l, ptr, space)]; *pp; pp = &(*pp)->next) {
		struct ledger_entry *e = *pp;
		if (e->ptr == ptr && e->space == space) {
			*pp = e->next;
			l->nlive--;
			l->exact[space] -= e->size;
			l->outstanding[space] = clamp64(l->exact[space]);
			if (e->dev_slot >= 0) {
				l->dev_exact[e->dev_slot] -= e->size;
				l->dev_bytes[e->dev_slot] = clamp64(l->dev_exact[e->dev_slot]);
			}
			l->last_dev_slot = e->dev_slot;
			return e;
		}
	}
	return NULL;
}

/* device memory and handles are the physical bytes a device holds; mapped
 * ranges and PyTorch's blocks are the same bytes again, not counted twice */
static int32_t dev_slot(uint32_t space, int32_t device)
{
	if (space != SPACE_PTR && space != SPACE_HANDLE)
		return -1;
	if (device == DEV_HOST)
		return LEDGER_SLOT_HOST;
	if (device < 0 || device >= LEDGER_MAX_DEVICES)
		return LEDGER_SLOT_UNKNOWN;
	return LEDGER_SLOT_DEV0 + device;
}

const char *ledger_dev_name(int slot, char *tmp, size_t n)
{
	if (slot == LEDGER_SLOT_UNKNOWN)
		return "unknown";
	if (slot == LEDGER_SLOT_HOST)
		return "host";
	snprintf(tmp, n, "%d", slot - LEDGER_SLOT_DEV0);
	return tmp;
}

int ledger_event(struct ledger *l, const void *data, size_t len)
{
	struct snoop_event ev;
	if (len != sizeof(ev)) {
		l->invalid++;
		return -1;
	}
	memcpy(&ev, data, sizeof(ev));
	if ((ev.type != EV_ALLOC && ev.type != EV_FREE) || ev.fn >= FN_COUNT || ev.space >= SPACE_COUNT ||
	    ev.device < DEV_HOST) {
		l->invalid++;
		return -1;
	}
	l->last_dev_slot = -1;
	if (!l->first_ts_ns)
		l->first_ts_ns = ev.ts_ns;
	l->last_ts_ns = ev.ts_ns;
	if (ev.type == EV_FREE) {
		l->frees++;
		struct ledger_entry *e = take(l, ev.ptr, ev.space);
		if (!e) {
			l->unmatched_frees++;
			return 0;
		}
		free(e);
		return 1;
	}
	l->allocs++;
	struct ledger_entry *e = take(l, ev.ptr, ev.space);
	if (e)
		l->replaced++;
	else
		e = xmalloc(sizeof(*e));
	*e = (struct ledger_entry){.ptr = ev.ptr, .size = ev.size, .space = ev.space, .stack_id = ev.stack_id, .fn = ev.fn,
				   .dev_slot = dev_slot(ev.space, ev.device)};
	size_t s = slot(l, ev.ptr, ev.space);
	e->next = l->bucket[s];
	l->bucket[s] = e;
	l->nlive++;
	/* sizes come from the traced process: the sum is kept exact (a
	 * saturated sum went wrong at the next free) and shown saturated */
	l->exact[ev.space] += ev.size;
	uint64_t o = l->outstanding[ev.space] = clamp64(l->exact[ev.space]);
	if (o > l->peak[ev.space])
		l->peak[ev.space] = o;
	if (e->dev_slot >= 0) {
		l->dev_exact[e->dev_slot] += ev.size;
		l->dev_bytes[e->dev_slot] = clamp64(l->dev_exact[e->dev_slot]);
		l->dev_seen[e->dev_slot / 64] |= 1ull << (e->dev_slot % 64);
	}
	l->last_dev_slot = e->dev_slot;
	if (l->nlive > l->nbucket)
		grow(l);
	return 1;
}

static int by_key(const void *a, const void *b)
{
	const struct ledger_leak *x = a, *y = b;
	if (x->stack_id != y->stack_id)
		return x->stack_id < y->stack_id ? -1 : 1;
	return x->space < y->space ? -1 : x->space > y->space;
}

static int by_bytes(const void *a, const void *b)
{
	const struct ledger_leak *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return by_key(a, b);
}

struct ledger_leak *ledger_leaks(const struct ledger *l, size_t *n)
{
	/* one row per live allocation, sorted by (stack, space), equal keys merged */
	struct ledger_leak *g = xcalloc(l->nlive ? l->nlive : 1, sizeof(*g));
	size_t k = 0;
	for (size_t i = 0; i < l->nbucket; i++)
		for (const struct ledger_entry *e = l->bucket[i]; e; e = e->next)
			g[k++] = (struct ledger_leak){.stack_id = e->stack_id, .space = (uint32_t)e->space,
						      .fn_mask = 1u << e->fn, .bytes = e->size, .count = 1};
	qsort(g, k, sizeof(*g), by_key);
	size_t m = 0;
	for (size_t i = 0; i < k; i++) {
		if (m && by_key(&g[m - 1], &g[i]) == 0) {
			struct ledger_leak *t = &g[m - 1];
			t->bytes = t->bytes > UINT64_MAX - g[i].bytes ? UINT64_MAX : t->bytes + g[i].bytes;
			t->count++;
			t->fn_mask |= g[i].fn_mask;
		} else {
			g[m++] = g[i];
		}
	}
	qsort(g, m, sizeof(*g), by_bytes);
	*n = m;
	return g;
}
