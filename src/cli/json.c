/*
 * json.c - `dyno json FILE...`: validate JSON files with the project's
 * reader and report the first error as FILE:LINE:COLUMN (byte OFFSET).
 * Useful on a trace that another tool refuses ("is it truncated? where?").
 * A gzip file (.json.gz, found by its magic bytes) is read through the
 * trace loader's byte source, inflated on a second thread; its offsets are
 * in the uncompressed text.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "core/args.h"
#include "core/clock.h"
#include "core/json.h"
#include "trace/source.h"

/* stdin that is a pipe: read as it comes.  The byte source needs a file it
 * can seek in; a gzip stream on a pipe is refused by its magic bytes. */
static ssize_t read_pipe(void *ctx, char *dst, size_t cap, const char **err)
{
	bool *first = ctx;
	ssize_t n = read(STDIN_FILENO, dst, cap);
	if (*first && n >= 2 && (unsigned char)dst[0] == 0x1f && (unsigned char)dst[1] == 0x8b) {
		*err = "gzip data on a pipe: pass the file, or zcat it into dyno json -";
		return -1;
	}
	*first = false;
	return n;
}

static int check_one(const char *path, bool quiet, bool lenient)
{
	char emsg[512];
	struct stat st;
	bool pipe_in = strcmp(path, "-") == 0 && (fstat(STDIN_FILENO, &st) != 0 || !S_ISREG(st.st_mode));
	bool first = true;
	struct trace_source *src = NULL;
	if (!pipe_in) {
		src = trace_source_open(strcmp(path, "-") == 0 ? "/dev/stdin" : path, true, emsg, sizeof emsg);
		if (!src) {
			fprintf(stderr, "%s\n", emsg);
			return 1;
		}
	}
	bool gz = src && trace_source_is_gzip(src);
	struct json_reader r;
	if (src)
		json_reader_init_stream(&r, trace_source_read, src, 0, lenient ? JSON_LENIENT_UTF8 : 0);
	else
		json_reader_init_stream(&r, read_pipe, &first, 0, lenient ? JSON_LENIENT_UTF8 : 0);
	uint64_t values = 0, maxdepth = 0;
	int64_t t0 = clock_mono_ns();
	enum json_tok t;
	while ((t = json_next(&r)) != JSON_EOF && t != JSON_ERROR) {
		if (t != JSON_KEY && t != JSON_OBJ_END && t != JSON_ARR_END)
			values++;
		if (json_depth(&r) > maxdepth)
			maxdepth = json_depth(&r);
	}
	double secs = (double)(clock_mono_ns() - t0) / 1e9;
	uint64_t bytes = r.base_off + (uint64_t)(r.end - r.base);
	int rc = 0;
	if (t == JSON_ERROR) {
		fprintf(stderr, "%s:%llu:%llu: error: %s (%sbyte offset %llu)\n", path, (unsigned long long)r.err.line,
			(unsigned long long)r.err.column, r.err.msg, gz ? "uncompressed " : "",
			(unsigned long long)r.err.offset);
		rc = 1;
	} else if (!quiet) {
		printf("%s: valid JSON, %llu %sbytes, %llu values, max depth %llu, %.0f MB/s", path,
		       (unsigned long long)bytes, gz ? "uncompressed " : "", (unsigned long long)values, (unsigned long long)maxdepth,
		       secs > 0 ? (double)bytes / secs / 1e6 : 0.0);
		if (r.replaced)
			printf(", %llu invalid UTF-8 sequences replaced", (unsigned long long)r.replaced);
		printf("\n");
	}
	json_reader_free(&r);
	if (src)
		trace_source_close(src);
	return rc;
}

int cmd_json(int argc, char **argv)
{
	bool quiet = false, lenient = false;
	const struct arg_opt opts[] = {
		{"quiet", 'q', ARG_BOOL, &quiet, NULL, "print only errors", 0, 0, NULL},
		{"lenient-utf8", 0, ARG_BOOL, &lenient, NULL, "replace invalid UTF-8 instead of failing", 0, 0, NULL},
		{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL},
	};
	const struct arg_cmd cmd = {
		.prog = "dyno json",
		.usage = "dyno json [options] FILE...",
		.description = "Check that each FILE ('-' for stdin; .json or .json.gz) is valid JSON; on failure print\n"
			       "FILE:LINE:COLUMN: error: MESSAGE (byte offset N) and exit 1.",
		.opts = opts,
		.min_pos = 1,
		.max_pos = ARGS_ANY,
		.missing_error = "no file given (see --help)",
	};
	struct args a;
	int rc = args_cmd(&cmd, argc, argv, &a);
	if (rc >= 0)
		return rc;
	int bad = 0;
	for (int i = 0; i < a.npos; i++)
		bad |= check_one(a.pos[i], quiet, lenient);
	args_free(&a);
	return bad;
}
