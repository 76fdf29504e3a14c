/*
 * fanout.c - how long one `dyno gputrace --hostnames ...` takes to reach N
 * daemons (issue #5 target: 256 daemons in <= 1 s), against the baseline
 * measured in the same run: N separate single-host `dyno gputrace` calls
 * one after another, which is what upstream's unitrace.py does.
 *
 * The daemons are the tests' recording fake (tests/lib/fake_daemon.h):
 * N loopback ports served by one thread, each with two registered
 * processes, answering like upstream dynolog.  Every figure is the whole
 * wall time of the dyno process (start, resolve, connect, send, answer,
 * print), median of several runs.
 *
 *   build/bench/fanout [N] [RUNS]      defaults: 256 5
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/lib/fake_daemon.h"
#include "core/clock.h"

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void reset(struct fake_daemon *f)
{
	memset(f->pending, 0, (size_t)f->n * FAKE_MAX_PROCS * sizeof *f->pending);
}

/* Seconds for one dyno call; exits on failure (a bench that measures
 * errors measures nothing). */
static double timed(char **argv, const char *what)
{
	struct buf out = BUF_INIT, err = BUF_INIT;
	int64_t t0 = clock_mono_ns();
	int rc = run_dyno(argv, &out, &err, 120);
	double s = (double)(clock_mono_ns() - t0) / 1e9;
	if (rc != 0) {
		fprintf(stderr, "fanout: %s failed (exit %d):\n%s%s", what, rc, out.data, err.data);
		exit(1);
	}
	buf_free(&out);
	buf_free(&err);
	return s;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 256, runs = argc > 2 ? atoi(argv[2]) : 5;
	if (n < 1 || n > 4096 || runs < 1 || runs > 100) {
		fprintf(stderr, "usage: fanout [DAEMONS 1..4096] [RUNS 1..100]\n");
		return 2;
	}
	struct fake_daemon f;
	if (!fake_start(&f, n, FAKE_UPSTREAM)) {
		fprintf(stderr, "fanout: cannot listen on %d loopback ports: %s\n", n, strerror(errno));
		return 1;
	}
	fake_add_proc(&f, 4000, 3999, 0);
	fake_add_proc(&f, 4001, 3999, 0);
	struct buf hosts = BUF_INIT;
	fake_hostnames(&f, &hosts);

	double *fan = xcalloc((size_t)runs, sizeof *fan), *one = xcalloc((size_t)runs, sizeof *one);
	char *fargv[] = {"dyno", "gputrace", "--hostnames", hosts.data, "--log-file", "/tmp/bench_{host}.json", NULL};
	char port0[16];
	snprintf(port0, sizeof port0, "%d", f.ports[0]);
	char *oargv[] = {"dyno", "--hostname", "127.0.0.1", "--port", port0, "gputrace", "--log-file",
			 "/tmp/bench.json", NULL};
	for (int r = 0; r < runs; r++) {
		reset(&f);
		one[r] = timed(oargv, "single-host gputrace");
		reset(&f);
		fan[r] = timed(fargv, "fan-out gputrace");
	}
	/* baseline: one process per host, sequentially (once: it is slow) */
	reset(&f);
	int64_t t0 = clock_mono_ns();
	for (int i = 0; i < n; i++) {
		char p[16];
		snprintf(p, sizeof p, "%d", f.ports[i]);
		char *a[] = {"dyno", "--hostname", "127.0.0.1", "--port", p, "gputrace", "--log-file", "/tmp/bench.json",
			     NULL};
		timed(a, "sequential gputrace");
	}
	double seq = (double)(clock_mono_ns() - t0) / 1e9;
	qsort(fan, (size_t)runs, sizeof *fan, cmp_dbl);
	qsort(one, (size_t)runs, sizeof *one, cmp_dbl);
	double fm = fan[runs / 2], om = one[runs / 2];
	size_t reqs = f.nreqs;
	printf("fan-out: dyno gputrace to %d daemons (loopback fakes, median of %d runs)\n", n, runs);
	printf("  one dyno call, 1 daemon                 %8.1f ms\n", om * 1e3);
	printf("  one dyno call, %4d daemons             %8.1f ms   (min %.1f, max %.1f)   target <= 1000 ms: %s\n", n,
	       fm * 1e3, fan[0] * 1e3, fan[runs - 1] * 1e3, fm <= 1.0 ? "met" : "MISSED");
	printf("  baseline: %4d sequential dyno calls     %8.1f ms   (upstream unitrace.py style)\n", n, seq * 1e3);
	printf("  speed-up over the baseline              %8.1fx\n", seq / fm);
	printf("  cost per extra daemon in one call       %8.3f ms\n", n > 1 ? (fm - om) * 1e3 / (n - 1) : 0.0);
	printf("  requests recorded by the fakes          %8zu\n", reqs);
	fake_stop(&f);
	buf_free(&hosts);
	free(fan);
	free(one);
	return 0;
}
