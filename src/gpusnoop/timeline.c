/* timeline.c - see timeline.h.  Names are our own constants: nothing to escape. */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "gpusnoop/probes.h"
#include "gpusnoop/timeline.h"

static int64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

bool timeline_open(struct timeline *t, const char *path, int pid, unsigned spaces)
{
	*t = (struct timeline){.pid = pid, .spaces = spaces, .first = true, .min_bytes = TIMELINE_MIN_BYTES,
			       .max_instants = TIMELINE_MAX_INSTANTS};
	t->f = fopen(path, "we");
	if (!t->f)
		return false;
	t->mono_to_real_ns = now_ns(CLOCK_REALTIME) - now_ns(CLOCK_MONOTONIC);
	fputs("{\"traceEvents\":[", t->f);
	return true;
}

/* the common head of an event: separator, name, phase, pid, tid, ts (us, 3 decimals: ns) */
static void head(struct timeline *t, const char *name, char ph, uint32_t tid, uint64_t ts_ns)
{
	int64_t ns = (int64_t)ts_ns + t->mono_to_real_ns;
	fprintf(t->f, "%s\n{\"name\":\"%s\",\"ph\":\"%c\",\"pid\":%d,\"tid\":%" PRIu32 ",\"ts\":%" PRId64 ".%03d",
		t->first ? "" : ",", name, ph, t->pid, tid, ns / 1000, (int)(ns % 1000));
	t->first = false;
}

/* one counter per device slot: a track each in Perfetto, however many devices */
static void device_point(struct timeline *t, const struct ledger *l, int slot, uint64_t ts_ns)
{
	char tmp[16], name[64];
	snprintf(name, sizeof(name), "gpusnoop bytes on device %s", ledger_dev_name(slot, tmp, sizeof(tmp)));
	head(t, name, 'C', 0, ts_ns);
	fprintf(t->f, ",\"args\":{\"bytes\":%" PRIu64 "}}", l->dev_bytes[slot]);
}

/* the outstanding bytes per watched space: one counter, an arg each */
static void spaces_point(struct timeline *t, const struct ledger *l, uint64_t ts_ns)
{
	head(t, "gpusnoop outstanding bytes", 'C', 0, ts_ns);
	fputs(",\"args\":{", t->f);
	const char *sep = "";
	for (uint32_t s = 0; s < SPACE_COUNT; s++)
		if (t->spaces & (1u << s)) {
			fprintf(t->f, "%s\"%s\":%" PRIu64, sep, snoop_space_name(s), l->outstanding[s]);
			sep = ",";
		}
	fputs("}}", t->f);
}

void timeline_bytes(struct timeline *t, const struct ledger *l, uint64_t ts_ns)
{
	if (!t->f)
		return;
	if (t->devices && l->last_dev_slot >= 0)
		device_point(t, l, l->last_dev_slot, ts_ns);
	spaces_point(t, l, ts_ns);
}

void timeline_alloc(struct timeline *t, const struct snoop_event *ev)
{
	if (!t->f || ev->type != EV_ALLOC || ev->size < t->min_bytes)
		return;
	if (t->instants >= t->max_instants) {
		t->left_out++;
		return;
	}
	t->instants++;
	head(t, snoop_fn_name(ev->fn), 'i', ev->tid, ev->ts_ns);
	fprintf(t->f, ",\"s\":\"t\",\"cat\":\"gpusnoop\",\"args\":{\"bytes\":%" PRIu64 ",\"ptr\":\"0x%" PRIx64 "\",\"space\":\"%s\"",
		(uint64_t)ev->size, (uint64_t)ev->ptr, snoop_space_name(ev->space));
	if (ev->space == SPACE_PTR || ev->space == SPACE_HANDLE) {
		char tmp[16];
		int slot = ev->device == DEV_HOST ? LEDGER_SLOT_HOST
			   : ev->device < 0 || ev->device >= LEDGER_MAX_DEVICES ? LEDGER_SLOT_UNKNOWN
										   : LEDGER_SLOT_DEV0 + ev->device;
		if (t->devices)
			fprintf(t->f, ",\"device\":\"%s\"", ledger_dev_name(slot, tmp, sizeof(tmp)));
	}
	fputs("}}", t->f);
}

void timeline_sync(struct timeline *t, const struct snoop_event *ev)
{
	if (!t->f)
		return;
	head(t, snoop_fn_name(ev->fn), 'X', ev->tid, ev->ts_ns);
	fprintf(t->f, ",\"dur\":%" PRIu64 ".%03d,\"cat\":\"gpusnoop\"", (uint64_t)ev->size / 1000, (int)(ev->size % 1000));
	if (ev->fn != FN_CUDA_DEVICE_SYNCHRONIZE)
		fprintf(t->f, ",\"args\":{\"%s\":\"0x%" PRIx64 "\"}",
			ev->fn == FN_CUDA_EVENT_SYNCHRONIZE ? "event" : "stream", (uint64_t)ev->ptr);
	fputs("}", t->f);
}

void timeline_launches(struct timeline *t, uint64_t ts_ns, double per_second)
{
	if (!t->f)
		return;
	head(t, "gpusnoop launches/s", 'C', 0, ts_ns);
	fprintf(t->f, ",\"args\":{\"launches\":%.1f}}", per_second);
}

bool timeline_close(struct timeline *t, const struct ledger *l, uint64_t ts_ns)
{
	if (!t->f)
		return true;
	/* a last point at the end, so the timeline reaches the report's moment */
	if (t->spaces) {
		if (t->devices)
			for (int s = 0; s < LEDGER_DEV_SLOTS; s++)
				if (ledger_dev_seen(l, s))
					device_point(t, l, s, ts_ns);
		spaces_point(t, l, ts_ns);
	}
	if (t->left_out) { /* bounded: say what is not there */
		head(t, "gpusnoop: large allocations left out", 'i', 0, ts_ns);
		fprintf(t->f, ",\"s\":\"g\",\"cat\":\"gpusnoop\",\"args\":{\"left_out\":%" PRIu64 ",\"shown\":%" PRIu64
			      ",\"min_bytes\":%" PRIu64 "}}", t->left_out, t->instants, t->min_bytes);
	}
	fputs("\n]}\n", t->f);
	bool ok = !ferror(t->f);
	ok = fclose(t->f) == 0 && ok;
	t->f = NULL;
	return ok;
}
