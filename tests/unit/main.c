/*
 * main.c - unit test runner: `unit-tests [SUBSTRING...]` runs the matching
 * tests, each in a forked child with its own temporary directory.
 */
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
		fflush(stdout);
		fflush(stderr);
		pid_t pid = fork();
		if (pid == 0) {
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
			passed++;
		} else {
			if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
				printf("FAIL %s (timed out after 300 s)\n", cases[i].name);
			else if (WIFSIGNALED(st))
				printf("FAIL %s (killed by signal %d)\n", cases[i].name, WTERMSIG(st));
			else
				printf("FAIL %s\n", cases[i].name);
			failed++;
		}
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
