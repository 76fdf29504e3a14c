/*
 * calls.h - gpusnoop's bookkeeping of launches and synchronisations: the
 * per-function call counts the BPF program keeps (launches make no record),
 * and the ring buffer's sync records (validated here) grouped by stack,
 * with their count, total and longest wait.  No BPF here, so the unit
 * tests and the fuzzer drive it with plain bytes.
 *
 * Cost: one hash lookup per sync record, 40 bytes per distinct stack.
 */
#ifndef DYNO_GPUSNOOP_CALLS_H
#define DYNO_GPUSNOOP_CALLS_H

#include <stddef.h>
#include <stdint.h>

#include "gpusnoop/event.h"

struct sync_group {
	int32_t stack_id; /* < 0: stack unavailable (all such syncs together) */
	uint32_t fn_mask; /* bit per enum snoop_fn */
	uint64_t count, total_ns, max_ns;
};

struct calls {
	uint64_t count[FN_COUNT]; /* calls per function, from the BPF counters */
	uint64_t sync_records;    /* sync records received (count[] may be ahead: calls still waiting) */
	uint64_t sync_ns;         /* their total wait */
	uint64_t invalid;         /* sync records that failed validation */
	struct sync_group *g;     /* open addressing by stack id; used slots have count > 0 */
	size_t cap, n;
};

void calls_init(struct calls *c);
void calls_free(struct calls *c);
/* One ring-buffer record that claims to be EV_SYNC: 1 taken, -1 invalid
 * (counted).  ev (may be NULL) gets the validated record. */
int calls_sync_event(struct calls *c, const void *data, size_t len, struct snoop_event *ev);
/* The sync groups as the kernel keeps them (replacing any held): forgets
 * every group and the totals, then takes each of n; a group whose stack id
 * is below -1, whose functions are not syncs or whose count is 0 is
 * counted invalid and left out. */
void calls_sync_reset(struct calls *c);
int calls_sync_group(struct calls *c, const struct sync_group *in);
/* Groups by count (then total wait), most first; *n groups; free() it. */
struct sync_group *calls_sync_top(const struct calls *c, size_t *n);
/* sum of count[] over the functions of one group of probes (fn_first..fn_last) */
uint64_t calls_sum(const struct calls *c, uint32_t fn_first, uint32_t fn_last);

#endif
