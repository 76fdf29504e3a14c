/*
 * test_perf.c - the perf_event collector on this machine: whatever the PMU
 * and perf_event_paranoid allow is published after the baseline tick, and
 * every event that could not be opened is absent (never 0).  On the CI VM
 * (no PMU) this checks the "unavailable" path for the hardware events.
 */
#include <math.h>
#include <stdlib.h>

#include "core/clock.h"
#include "daemon/collect/perf.h"
#include "fixture.h"
#include "test.h"

TEST(perf_available_or_absent)
{
	struct perf_collector *p = perf_collector_new();
	REQUIRE(p);
	struct frame f;
	frame_init(&f);
	perf_collect(p, &f);
	CHECK_INT(f.n, 0); /* the first read is the baseline */
	/* generate some events: CPU time and page faults */
	int64_t end = clock_cpu_ns() + 30 * NS_PER_MS;
	while (clock_cpu_ns() < end) {
		char *m = malloc(1 << 20);
		for (int i = 0; m && i < (1 << 20); i += 4096)
			m[i] = 1;
		free(m);
	}
	frame_reset(&f, 1);
	perf_collect(p, &f);
	static const char *keys[] = {"perf_cycles",      "perf_instructions", "perf_cache_misses", "perf_llc_misses",
				     "perf_dtlb_misses", "perf_page_faults",  "perf_cpu_migrations"};
	int have = 0;
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		if (perf_collector_has(p, keys[i])) {
			have++;
			CHECK(!isnan(fval(&f, keys[i])));
		} else {
			ABSENT(&f, keys[i]);
		}
	}
	if (perf_collector_has(p, "perf_page_faults"))
		CHECK(fval(&f, "perf_page_faults") > 0);
	bool hw = perf_collector_has(p, "perf_cycles") && perf_collector_has(p, "perf_instructions");
	if (hw) {
		CHECK(fval(&f, "ipc") > 0);
		CHECK(fval(&f, "mips") > 0);
	} else {
		ABSENT(&f, "ipc");
		ABSENT(&f, "mips");
		ABSENT(&f, "mega_cycles_per_second");
	}
	fprintf(stderr, "    %d of 7 perf events available here (hardware: %s)\n", have, hw ? "yes" : "no");
	CHECK(!perf_collector_has(p, "no_such_event"));
	frame_free(&f);
	perf_collector_free(p);
}
