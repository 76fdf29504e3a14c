/*
 * main.c - unit test runner: `unit-tests [SUBSTRING...]` runs the matching
 * tests, each in a forked child with its own temporary directory.
 *
 * A child's stderr goes to a file: many tests feed bad input on purpose and
 * the code under test logs warnings about it.  A passing test's stderr is
 * dropped (a test that expects a warning checks it with test_stderr()); a
 * failing test's is printed under its FAIL line, with the CHECK messages and
 * any sanitizer report.  DYNO_TEST_VERBOSE=1 prints every test's stderr,
 * passing or not (still captured, so test_stderr() works the same).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

struct tcase {
	const char *name;
	void (*fn)(void);
};
static struct tcase *cases;
static size_t ncases;
static int failures;
static char tmpdir[256];
static char errpath[300]; /* the running test's captured stderr */

void test_register(const char *name, void (*fn)(void))
{
	cases = realloc(cases, (ncases + 1) * sizeof *cases);
	if (!cases)
		abort();
	cases[ncases].name = name;
	cases[ncases].fn = fn;
	ncases++;
}

void test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "    %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	failures++;
}

void test_abort(void) { exit(1); }

const char *test_data_dir(void)
{
	const char *s = getenv("DYNO_TESTDATA");
	return s && *s ? s : "tests/data";
}

const char *test_tmpdir(void) { return tmpdir; }

const char *test_stderr(void)
{
	static char *text;
	free(text);
	text = NULL;
	fflush(stderr);
	FILE *f = errpath[0] ? fopen(errpath, "r") : NULL;
	size_t len = 0, cap = 0;
	if (f) {
		char tmp[4096];
		size_t n;
		while ((n = fread(tmp, 1, sizeof tmp, f)) > 0) {
			if (len + n + 1 > cap) {
				cap = (len + n + 1) * 2;
				text = realloc(text, cap);
				if (!text)
					abort();
			}
			memcpy(text + len, tmp, n);
			len += n;
		}
		fclose(f);
	}
	if (!text) {
		text = malloc(1);
		if (!text)
			abort();
	}
	text[len] = 0;
	return text;
}

/* Print the captured stderr of a failed test, indented, at most the last
 * 8 KiB (a sanitizer report or the CHECK lines are at the end). */
static void show_stderr(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	if (fseek(f, 0, SEEK_END) == 0 && ftell(f) > 8192)
		fseek(f, -8192, SEEK_END);
	else
		rewind(f);
	char line[1024];
	while (fgets(line, sizeof line, f))
		printf("    %s%s", line, strchr(line, '\n') ? "" : "\n");
	fclose(f);
}

static int cmp(const void *a, const void *b)
{
	return strcmp(((const struct tcase *)a)->name, ((const struct tcase *)b)->name);
}

int main(int argc, char **argv)
{
	qsort(cases, ncases, sizeof *cases, cmp);
	int passed = 0, failed = 0;
	for (size_t i = 0; i < ncases; i++) {
		bool match = argc < 2;
		for (int a = 1; a < argc; a++)
			if (strstr(cases[i].name, argv[a]))
				match = true;
		if (!match)
			continue;
		snprintf(tmpdir, sizeof tmpdir, "/tmp/dyno-test-XXXXXX");
		if (!mkdtemp(tmpdir)) {
			perror("mkdtemp");
			return 2;
		}
		bool verbose = getenv("DYNO_TEST_VERBOSE") && *getenv("DYNO_TEST_VERBOSE") == '1';
		snprintf(errpath, sizeof errpath, "%s.stderr", tmpdir);
		fflush(stdout);
		fflush(stderr);
		pid_t pid = fork();
		if (pid == 0) {
			int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
			if (fd < 0 || dup2(fd, STDERR_FILENO) < 0) {
				perror(errpath);
				exit(1);
			}
			close(fd);
			/* a hanging test fails alone instead of blocking the suite
			 * (SIGALRM's default action ends the child) */
			alarm(300);
			cases[i].fn();
			exit(failures ? 1 : 0); /* exit(), not _exit(): LeakSanitizer runs at exit */
		}
		int st = 0;
		waitpid(pid, &st, 0);
		char cmd[300];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "warning: could not remove %s\n", tmpdir);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
			printf("ok   %s\n", cases[i].name);
			if (verbose) {
				fflush(stdout);
				show_stderr(errpath);
			}
			passed++;
		} else {
			if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
				printf("FAIL %s (timed out after 300 s)\n", cases[i].name);
			else if (WIFSIGNALED(st))
				printf("FAIL %s (killed by signal %d)\n", cases[i].name, WTERMSIG(st));
			else
				printf("FAIL %s\n", cases[i].name);
			fflush(stdout);
			show_stderr(errpath);
			failed++;
		}
		unlink(errpath);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
