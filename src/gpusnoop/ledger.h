/*
 * ledger.h - gpusnoop's bookkeeping of what is allocated: every record from
 * the ring buffer (--trace) and, at the end, every allocation the kernel's
 * live map still holds go through ledger_event(), which validates it (size,
 * type, function, space), keeps the live allocations in a hash table keyed
 * by (space, pointer), the outstanding bytes per space and per device
 * (device memory and cuMemCreate handles: the physical bytes; mapped
 * ranges and PyTorch's blocks are those bytes again).  At the end
 * ledger_leaks() groups what is still live by (stack, space).  No BPF here,
 * so the unit tests and the fuzzer drive it with plain bytes.
 *
 * Cost: one hash lookup per record, 48 bytes per live allocation.
 */
#ifndef DYNO_GPUSNOOP_LEDGER_H
#define DYNO_GPUSNOOP_LEDGER_H

#include <stddef.h>
#include <stdint.h>

#include "gpusnoop/event.h"

struct ledger_entry {
	struct ledger_entry *next;
	uint64_t ptr, size, space;
	int32_t stack_id;
	uint32_t fn;
	int32_t dev_slot; /* in dev_bytes; -1: a space not counted per device */
};

/* Per-device slots: unknown, pinned host, then ordinals 0..LEDGER_MAX_DEVICES-1
 * (a larger ordinal counts as unknown). */
#define LEDGER_MAX_DEVICES 64
#define LEDGER_DEV_SLOTS (LEDGER_MAX_DEVICES + 2)
enum { LEDGER_SLOT_UNKNOWN, LEDGER_SLOT_HOST, LEDGER_SLOT_DEV0 };

struct ledger {
	struct ledger_entry **bucket;
	size_t nbucket, nlive;
	uint64_t allocs, frees;
	uint64_t unmatched_frees;  /* freed pointers never seen allocated (before attach, or a nested free) */
	uint64_t replaced;         /* allocation of a pointer already live: its free was lost */
	uint64_t invalid;          /* records that failed validation */
	uint64_t outstanding[SPACE_COUNT]; /* exact, or UINT64_MAX when it is more */
	unsigned __int128 exact[SPACE_COUNT]; /* sizes come from the traced process: no wrap */
	uint64_t peak[SPACE_COUNT];
	uint64_t first_ts_ns, last_ts_ns;
	uint64_t dev_bytes[LEDGER_DEV_SLOTS]; /* outstanding per device slot, exact or UINT64_MAX */
	unsigned __int128 dev_exact[LEDGER_DEV_SLOTS];
	uint64_t dev_seen[(LEDGER_DEV_SLOTS + 63) / 64]; /* bit per slot that ever held bytes */
	int last_dev_slot; /* the slot the last record changed; -1: none */
};

/* the name of a device slot in the timeline: "unknown", "host", "0", "1", ... */
const char *ledger_dev_name(int slot, char *tmp, size_t n);
static inline int ledger_dev_seen(const struct ledger *l, int slot)
{
	return (int)((l->dev_seen[slot / 64] >> (slot % 64)) & 1);
}

_Static_assert(FN_COUNT <= 32, "a leak group keeps one bit per function");

/* a group of live allocations: same stack, same space */
struct ledger_leak {
	int32_t stack_id;
	uint32_t space;
	uint32_t fn_mask; /* bit per enum snoop_fn that made them */
	uint64_t bytes, count;
};

void ledger_init(struct ledger *l);
void ledger_free(struct ledger *l);
/* One ring-buffer record of len bytes.  Returns 1 when outstanding bytes
 * changed (a timeline point), 0 when not, -1 when the record is invalid. */
int ledger_event(struct ledger *l, const void *data, size_t len);
/* Live allocations grouped, largest bytes first; *n groups; free() the array. */
struct ledger_leak *ledger_leaks(const struct ledger *l, size_t *n);

#endif
