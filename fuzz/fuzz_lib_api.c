/*
 * fuzz_lib_api.c - libFuzzer target for libdynolite.so's C API
 * (src/lib/dynolite.h): the input is text lines, load options up to a
 * "--" line, then the analysis name ("events:KIND" for dynolite_events),
 * then its options; a small real trace (written once to a temporary file)
 * is loaded with the load options, the analysis runs with its options,
 * every table and column is read, and the freed handles are used again.
 * Nothing may crash, hang or leak; every failure must come with a message.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/dynolite.h"

static const char trace_json[] =
	"{\"distributedInfo\": {\"rank\": 0}, \"traceEvents\": ["
	"{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100},"
	"{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#2\",\"pid\":1,\"tid\":1,\"ts\":100,\"dur\":100},"
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":30},"
	"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":12,\"dur\":5,"
	"\"args\":{\"correlation\":7}},"
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":20,\"dur\":40,"
	"\"args\":{\"stream\":7,\"correlation\":7}},"
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclKernel_AllReduce\",\"pid\":0,\"tid\":8,\"ts\":30,\"dur\":40,"
	"\"args\":{\"stream\":8,\"correlation\":9}}]}";

static char path[64];

static void remove_trace(void) { unlink(path); }

static void read_all(dynolite_handle r)
{
	size_t n = 0;
	if (dynolite_result_ntables(r, &n) != 0)
		abort();
	for (size_t i = 0; i <= n; i++) { /* one past the end: an error, not a read */
		struct dynolite_table t;
		if (dynolite_table(r, i, &t) != 0) {
			if (i < n || !*dynolite_error())
				abort();
			continue;
		}
		for (size_t c = 0; c <= t.ncols; c++) {
			struct dynolite_column col;
			if (dynolite_column(r, i, c, &col) != 0) {
				if (c < t.ncols)
					abort();
				continue;
			}
			volatile const char *s = col.strings;
			if (col.type == DYNOLITE_STR && t.nrows && s[col.strings_len - 1] != 0)
				abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!path[0]) {
		snprintf(path, sizeof path, "/tmp/fuzz_lib_api_%d.json", (int)getpid());
		FILE *f = fopen(path, "w");
		if (!f || fwrite(trace_json, 1, sizeof trace_json - 1, f) != sizeof trace_json - 1 || fclose(f))
			abort();
		atexit(remove_trace);
	}
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = 0;
	const char *lopts[16], *ropts[16], *name = "summary";
	size_t nl = 0, nr = 0;
	int part = 0;
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (part == 0 && strcmp(line, "--") == 0)
			part = 1;
		else if (part == 0 && nl < 16)
			lopts[nl++] = line;
		else if (part == 1)
			name = line, part = 2;
		else if (part == 2 && nr < 16)
			ropts[nr++] = line;
	}
	const char *in[] = {path};
	dynolite_handle t = 0, r = 0;
	if (dynolite_load(in, 1, lopts, nl, &t) != 0) {
		if (!*dynolite_error())
			abort();
	} else {
		int rc = strncmp(name, "events:", 7) == 0 ? dynolite_events(t, name + 7, ropts, nr, &r)
							  : dynolite_run(t, strcmp(name, "diff") ? 0 : t, name, ropts, nr, &r);
		if (rc != 0 && !*dynolite_error())
			abort();
		if (rc == 0) {
			read_all(r);
			if (dynolite_free(r) != 0)
				abort();
			size_t n;
			if (dynolite_result_ntables(r, &n) == 0 || dynolite_free(r) == 0)
				abort(); /* a freed handle must be refused */
		}
		if (dynolite_free(t) != 0 || dynolite_run(t, 0, "temporal", NULL, 0, &r) == 0)
			abort();
	}
	free(text);
	return 0;
}
