/*
 * watched.h - what the programs gpusnoop's tests watch share (leaky.c,
 * devices.c): the handshake with the test (print "ready" once the
 * libraries are mapped, wait for a line on stdin sent once the probes are
 * attached) and a check that ends the program on a failed call.
 */
#ifndef DYNO_TESTS_GPUSNOOP_WATCHED_H
#define DYNO_TESTS_GPUSNOOP_WATCHED_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

static inline void check_as(const char *prog, int r, const char *what)
{
	if (r != 0) {
		fprintf(stderr, "%s: %s failed: %d\n", prog, what, r);
		exit(1);
	}
}

/* false when stdin closed before the line came */
static inline bool ready_then_wait(void)
{
	char line[16];
	printf("ready\n");
	fflush(stdout);
	return fgets(line, sizeof(line), stdin) != NULL;
}

#endif
