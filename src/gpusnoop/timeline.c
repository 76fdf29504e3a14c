/* timeline.c - see timeline.h.  Names are our own constants: nothing to escape. */
#include <inttypes.h>
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
	*t = (struct timeline){.pid = pid, .spaces = spaces, .first = true};
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

void timeline_bytes(struct timeline *t, const struct ledger *l, uint64_t ts_ns)
{
	if (!t->f)
		return;
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
	if (t->spaces)
		timeline_bytes(t, l, ts_ns);
	fputs("\n]}\n", t->f);
	bool ok = !ferror(t->f);
	ok = fclose(t->f) == 0 && ok;
	t->f = NULL;
	return ok;
}
