/*
 * trace_check.c - build/trace-check FILE...: runs the Perfetto-rules checker
 * of tests/lib/trace_check.c on written traces, for the integration tests
 * (the unit tests call the library directly).  Prints the first broken rule
 * and exits 1; with every file good, prints the counts and exits 0.
 * Test code, not part of the project's programs.
 */
#include <stdio.h>

#include "core/buf.h"
#include "../lib/trace_check.h"

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: trace-check TRACE.json[.gz]...\n");
		return 2;
	}
	int rc = 0;
	for (int i = 1; i < argc; i++) {
		struct trace_check_stats st = {0};
		struct buf why = BUF_INIT;
		if (trace_check_file(argv[i], &st, &why)) {
			printf("%s: ok: %zu events, %zu complete, %zu counters\n", argv[i], st.events, st.complete,
			       st.counters);
		} else {
			fprintf(stderr, "%s: %s\n", argv[i], why.data ? why.data : "broken");
			rc = 1;
		}
		buf_free(&why);
	}
	return rc;
}
