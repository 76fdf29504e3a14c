/*
 * test_analyze_run.c - the fast after-parse pieces against the plain ones
 * they replace: the radix sort against qsort with a row tie-break (random,
 * nearly sorted, duplicate and signed keys), par_for runs each task once,
 * and analyze_run (every analysis of every rank on a thread pool) gives
 * byte for byte the tables of the sequential analysis functions, on real
 * traces (one file, a two-rank directory, a rank selection, a selection of
 * no rank of the set), for one and for several threads; and every table of
 * the analysis table is the same whatever the thread count.
 */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analyze/run.h"
#include "core/par.h"
#include "test.h"
#include "trace/rsort.h"

struct kv {
	uint64_t k;
	uint32_t v;
};

static int kv_cmp(const void *a, const void *b)
{
	const struct kv *x = a, *y = b;
	if (x->k != y->k)
		return x->k < y->k ? -1 : 1;
	return x->v < y->v ? -1 : x->v > y->v;
}

/* xorshift: deterministic, no global state */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* rsort_kv over keys made by gen(i) must equal qsort by (key, input position) */
static void check_sort(size_t n, int mode, uint64_t seed)
{
	uint64_t *key = malloc((n ? n : 1) * sizeof *key);
	uint32_t *val = malloc((n ? n : 1) * sizeof *val);
	struct kv *want = malloc((n ? n : 1) * sizeof *want);
	for (size_t i = 0; i < n; i++) {
		uint64_t r = next_rand(&seed);
		switch (mode) {
		case 0: key[i] = r; break;                                   /* random 64-bit */
		case 1: key[i] = r % 7; break;                               /* many duplicates */
		case 2: key[i] = i * 3 + (r % 50 == 0 ? r % 1000 : 0); break; /* nearly sorted */
		case 3: key[i] = rsort_key_f64(((double)(int64_t)(r % 2001) - 1000) / 4); break;
		case 4: key[i] = rsort_key_i64((int64_t)(r % 100) - 50); break;
		/* only a middle and the top digit vary: the others are no passes */
		case 5: key[i] = 0x0BCD000000000007ull | (r % 9) << 33 | (r % 3) << 62; break;
		default: key[i] = n - i; break;                              /* reversed */
		}
		val[i] = (uint32_t)i;
		want[i] = (struct kv){key[i], (uint32_t)i};
	}
	qsort(want, n, sizeof *want, kv_cmp);
	rsort_kv(key, val, n);
	size_t bad = 0;
	for (size_t i = 0; i < n; i++)
		bad += key[i] != want[i].k || val[i] != want[i].v;
	CHECK_INT(bad, 0);
	free(key);
	free(val);
	free(want);
}

TEST(rsort_matches_qsort_with_row_tiebreak)
{
	static const size_t sizes[] = {0, 1, 2, 63, 64, 65, 1000, 100000};
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
		for (int mode = 0; mode <= 6; mode++)
			check_sort(sizes[s], mode, 0x9E3779B97F4A7C15ull + sizes[s] * 31 + (uint64_t)mode);
}

TEST(rsort_keys_keep_double_and_int_order)
{
	const double d[] = {-INFINITY, -1e300, -2.5, -1, -1e-300, -0.0, 0.0, 1e-300, 1, 2.5, 1e300, INFINITY};
	for (size_t i = 0; i + 1 < sizeof d / sizeof d[0]; i++) {
		if (d[i] == d[i + 1])
			CHECK(rsort_key_f64(d[i]) == rsort_key_f64(d[i + 1])); /* -0.0 == 0.0 */
		else
			CHECK(rsort_key_f64(d[i]) < rsort_key_f64(d[i + 1]));
	}
	const int64_t v[] = {INT64_MIN, -5, -1, 0, 1, 7, INT64_MAX};
	for (size_t i = 0; i + 1 < sizeof v / sizeof v[0]; i++)
		CHECK(rsort_key_i64(v[i]) < rsort_key_i64(v[i + 1]));
	/* values without a payload */
	uint64_t k[200];
	for (size_t i = 0; i < 200; i++)
		k[i] = (i * 7919) % 200;
	rsort_kv(k, NULL, 200);
	for (size_t i = 0; i < 200; i++)
		CHECK_INT(k[i], i);
}

static void count_task(void *ctx, size_t i)
{
	int *hits = ctx;
	__atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
}

TEST(par_for_runs_each_task_once)
{
	int hits[257];
	for (int threads = 0; threads <= 4; threads++) {
		memset(hits, 0, sizeof hits);
		par_for(257, threads, count_task, hits);
		for (int i = 0; i < 257; i++)
			CHECK_INT(hits[i], 1);
	}
	par_for(0, 2, count_task, hits); /* nothing to do */
}

/* Each task's thread id: with the pool, the calls share its workers. */
struct tid_log {
	pid_t tid[64];
	int n;
	pthread_mutex_t mu;
};

static void tid_task(void *ctx, size_t i)
{
	(void)i;
	struct tid_log *l = ctx;
	pid_t me = gettid();
	usleep(200); /* long enough for the worker to take a task */
	pthread_mutex_lock(&l->mu);
	bool seen = false;
	for (int k = 0; k < l->n; k++)
		seen |= l->tid[k] == me;
	if (!seen && l->n < 64)
		l->tid[l->n++] = me;
	pthread_mutex_unlock(&l->mu);
}

TEST(par_for_keeps_its_workers_between_calls)
{
	struct tid_log l = {.mu = PTHREAD_MUTEX_INITIALIZER};
	for (int call = 0; call < 30; call++)
		par_for(4, 2, tid_task, &l);
	/* the caller and one worker, not a new thread per call (30 + 1) */
	CHECK(l.n >= 1);
	CHECK(l.n <= 2);
}

/* A task that runs a par_for of its own (the pool is taken: it starts
 * threads of its own), from two threads at once. */
struct nest {
	int hits[8][33];
};

static void inner_task(void *ctx, size_t i)
{
	int *row = ctx;
	__atomic_fetch_add(&row[i], 1, __ATOMIC_RELAXED);
}

static void outer_task(void *ctx, size_t i)
{
	struct nest *n = ctx;
	par_for(33, 2, inner_task, n->hits[i]);
}

static void *nest_thread(void *arg)
{
	for (int k = 0; k < 20; k++)
		par_for(8, 3, outer_task, arg);
	return NULL;
}

TEST(par_for_nested_and_from_two_threads)
{
	struct nest a, b;
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	pthread_t th;
	REQUIRE(pthread_create(&th, NULL, nest_thread, &a) == 0);
	nest_thread(&b);
	pthread_join(th, NULL);
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 33; j++) {
			CHECK_INT(a.hits[i][j], 20);
			CHECK_INT(b.hits[i][j], 20);
		}
}

TEST(par_for_in_a_child_after_fork)
{
	int hits[64] = {0};
	par_for(64, 2, count_task, hits); /* the parent's pool has a worker */
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		/* the worker is not copied: the child's pool starts empty */
		int h[64] = {0};
		par_for(64, 2, count_task, h);
		for (int i = 0; i < 64; i++)
			if (h[i] != 1)
				_exit(1);
		_exit(0);
	}
	int st = 0;
	REQUIRE(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st));
	CHECK_INT(WEXITSTATUS(st), 0);
	for (int i = 0; i < 64; i++)
		CHECK_INT(hits[i], 1);
}

static void put(const char *dir, const char *rel, const char *text)
{
	char p[1024];
	snprintf(p, sizeof p, "%s/%s", dir, rel);
	mkdir(dir, 0755);
	for (char *s = p + strlen(dir) + 1; (s = strchr(s, '/')); s++) {
		*s = 0;
		mkdir(p, 0755);
		*s = '/';
	}
	FILE *f = fopen(p, "w");
	REQUIRE(f);
	fputs(text, f);
	fclose(f);
}

/* A CPU quota anywhere on the way up counts, the smallest wins, "max" is
 * none; a cgroup v1 file (no "0::" line) or nothing to read gives 0. */
TEST(par_cgroup_quota_cores_reads_cpu_max_up_the_tree)
{
	char root[1024], cg[1024];
	snprintf(root, sizeof root, "%s/cg", test_tmpdir());
	snprintf(cg, sizeof cg, "%s/self-cgroup", test_tmpdir());
	put(test_tmpdir(), "self-cgroup", "1:name=systemd:/x\n0::/kubepods/pod1/ctr\n");
	CHECK_INT(par_cgroup_quota_cores(cg, root), 0); /* no cpu.max anywhere */
	put(root, "cpu.max", "max 100000\n");
	put(root, "kubepods/pod1/ctr/cpu.max", "max 100000\n");
	CHECK_INT(par_cgroup_quota_cores(cg, root), 0);
	put(root, "kubepods/pod1/cpu.max", "250000 100000\n"); /* 2.5 CPUs: 3 threads */
	CHECK_INT(par_cgroup_quota_cores(cg, root), 3);
	put(root, "kubepods/cpu.max", "50000 100000\n"); /* half a CPU above it */
	CHECK_INT(par_cgroup_quota_cores(cg, root), 1);
	put(root, "kubepods/pod1/ctr/cpu.max", "garbage\n");
	CHECK_INT(par_cgroup_quota_cores(cg, root), 1);
	put(test_tmpdir(), "self-cgroup", "4:cpu,cpuacct:/kubepods\n"); /* cgroup v1 only */
	CHECK_INT(par_cgroup_quota_cores(cg, root), 0);
	put(test_tmpdir(), "self-cgroup", "0::/\n"); /* a cgroup namespace: its root */
	put(root, "cpu.max", "400000 100000\n");
	CHECK_INT(par_cgroup_quota_cores(cg, root), 4);
	CHECK_INT(par_cgroup_quota_cores("/nonexistent/cgroup", root), 0);
}

/* par_cores() counts the affinity mask, not the machine's online CPUs: a
 * process pinned to fewer cores (taskset, a cpuset) starts no more threads. */
TEST(par_cores_follows_the_affinity_mask)
{
	cpu_set_t set;
	REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
	int c = par_cores();
	CHECK(c >= 1 && c <= CPU_COUNT(&set));
	CHECK_INT(par_threads(0), c);
	CHECK_INT(par_threads(3), 3);
}

struct start_seen {
	int ran;
	cpu_set_t mask; /* the thread's affinity when its function ran */
};

static void *note_start(void *arg)
{
	struct start_seen *s = arg;
	s->ran++;
	if (sched_getaffinity(0, sizeof s->mask, &s->mask) != 0)
		CPU_ZERO(&s->mask);
	return arg;
}

/* par_thread_start runs the function with its argument and hands the
 * thread the creator's whole affinity back (it is only created away from
 * the creator's core); a creator on one core gets a plain thread on it. */
TEST(par_thread_start_restores_the_affinity)
{
	cpu_set_t all;
	REQUIRE(sched_getaffinity(0, sizeof all, &all) == 0);
	for (int k = 0; k < 5; k++) {
		struct start_seen s = {0};
		pthread_t th;
		void *ret = NULL;
		REQUIRE(par_thread_start(&th, note_start, &s) == 0);
		REQUIRE(pthread_join(th, &ret) == 0);
		CHECK(ret == &s);
		CHECK_INT(s.ran, 1);
		CHECK(CPU_EQUAL(&s.mask, &all));
	}
	int cpu = sched_getcpu();
	REQUIRE(cpu >= 0);
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	REQUIRE(sched_setaffinity(0, sizeof one, &one) == 0);
	struct start_seen s = {0};
	pthread_t th;
	REQUIRE(par_thread_start(&th, note_start, &s) == 0);
	REQUIRE(pthread_join(th, NULL) == 0);
	CHECK_INT(s.ran, 1);
	CHECK(CPU_EQUAL(&s.mask, &one));
	REQUIRE(sched_setaffinity(0, sizeof all, &all) == 0);
}

static void render(struct buf *b, const struct atable *t)
{
	if (!t) {
		buf_puts(b, "(none)\n");
		return;
	}
	atable_render(t, AFMT_CSV, b);
	buf_append(b, t->notes.data, t->notes.len);
	atable_render(t, AFMT_TABLE, b);
}

/* The options of a fresh table config with args (NULL-ended) parsed
 * through its rows, as the CLI would. */
static void config_args(struct analysis_config *cfg, const char *const *args)
{
	analysis_config_init(cfg);
	char *argv[8];
	int argc = 0;
	while (args && args[argc] && argc < 8) {
		argv[argc] = (char *)args[argc];
		argc++;
	}
	struct arg_opt *rows = calloc(cfg->nrows + 1, sizeof *rows);
	memcpy(rows, cfg->rows, cfg->nrows * sizeof *rows);
	struct args a;
	REQUIRE(args_parse(rows, argc, argv, &a) == ARGS_OK);
	CHECK_INT(a.npos, 0);
	args_free(&a);
	free(rows);
	struct buf err = BUF_INIT;
	CHECK(analysis_config_check(cfg, &err) == 0);
	buf_free(&err);
}

/* Everything the sequential functions print for this selection, with the
 * options of cfg. */
static void sequential(const struct trace_set *set, const struct analyze_ranks *sel,
		       const struct analysis_config *cfg, struct buf *b)
{
	const struct idle_options *io = analysis_config_opts(cfg, &analysis_idle.opts);
	const struct launch_options *lo = analysis_config_opts(cfg, &analysis_launch.opts);
	struct kernel_breakdown_opts ko =
		kernel_step_breakdown_opts(analysis_config_opts(cfg, &analysis_step_kernel_breakdown.opts));
	struct launch_opts launch = {lo->runtime_cutoff, lo->launch_delay_cutoff, !lo->no_memory_events};
	struct atable *t = analyze_temporal(set, sel), *st = NULL;
	render(b, t);
	atable_free(t);
	t = analyze_idle(set, sel, io->delay, &st);
	render(b, t);
	render(b, st);
	atable_free(t);
	atable_free(st);
	struct atable *x, *y;
	analyze_kernels(set, sel, &ko, &x, &y);
	render(b, x);
	render(b, y);
	atable_free(x);
	atable_free(y);
	analyze_kernel_distribution(set, sel, &ko, &x, &y);
	render(b, x);
	render(b, y);
	atable_free(x);
	atable_free(y);
	t = analyze_overlap(set, sel);
	render(b, t);
	atable_free(t);
	struct atable **ls;
	size_t n = analyze_launch(set, sel, &launch, &ls);
	for (size_t i = 0; i < n; i++) {
		render(b, ls[i]);
		atable_free(ls[i]);
	}
	free(ls);
}

/* The analyses sequential() covers; a later row of the table is checked
 * by the thread-count comparison only (every result below). */
static bool has_plain_function(const struct analysis *a)
{
	return a == &analysis_temporal || a == &analysis_idle || a == &analysis_kernels ||
	       a == &analysis_kernel_distribution || a == &analysis_overlap || a == &analysis_launch;
}

/* analyze_run of every analysis (summary), every table computed: into b
 * the tables sequential() also prints, into all every table; the results'
 * names are their tables' own. */
static void parallel(const struct trace_set *set, const struct analyze_ranks *sel,
		     const struct analysis_config *cfg, int threads, struct buf *b, struct buf *all)
{
	struct analyze_run_opts o = {.config = cfg, .fmt = AFMT_JSON, .every_table = true, .threads = threads};
	struct analyze_results r;
	analyze_run(set, sel, &o, &r);
	for (size_t i = 0; i < r.n; i++) {
		if (has_plain_function(r.v[i].analysis))
			render(b, r.v[i].t);
		render(all, r.v[i].t);
		CHECK_STR(r.v[i].name, r.v[i].t->name);
		CHECK(r.v[i].shown); /* summary in JSON shows every table */
	}
	CHECK(r.ntimings > 0);
	analyze_results_free(&r);
}

static void check_same(const char *rel, const int *ranks, size_t nranks, bool fold_all)
{
	struct buf path = BUF_INIT;
	buf_printf(&path, "%s/traces/%s", test_data_dir(), rel);
	struct trace_load_opts lo = {0};
	analysis_load_opts(NULL, &lo);
	struct trace_set set;
	struct buf err = BUF_INIT;
	REQUIRE(trace_set_load(&set, path.data, &lo, &err) == 0);
	struct analyze_ranks sel = {ranks, nranks};
	static const char *const fold[] = {"--num-kernels", "3", NULL};
	struct analysis_config cfg;
	config_args(&cfg, fold_all ? fold : NULL);
	/* the defaults are HTA's */
	const struct idle_options *io = analysis_config_opts(&cfg, &analysis_idle.opts);
	const struct launch_options *lao = analysis_config_opts(&cfg, &analysis_launch.opts);
	const struct kernel_step_options *ko = analysis_config_opts(&cfg, &analysis_step_kernel_breakdown.opts);
	CHECK(io->delay == 30 && lao->runtime_cutoff == 50 && lao->launch_delay_cutoff == 100 &&
	      !lao->no_memory_events);
	CHECK_INT(ko->num_kernels, fold_all ? 3 : 10);
	CHECK(ko->duration_ratio == 0.8 && !ko->all_kernels && !ko->no_memory_kernels);
	struct buf want = BUF_INIT;
	sequential(&set, &sel, &cfg, &want);
	struct trace_set view = analyze_view(&set, &sel);
	CHECK(want.len > (view.nranks ? 1000 : 100)); /* real tables, or the notes of none */
	free(view.ranks);
	struct buf all1 = BUF_INIT;
	for (int threads = 1; threads <= 3; threads++) {
		struct buf got = BUF_INIT, all = BUF_INIT;
		parallel(&set, &sel, &cfg, threads, &got, &all);
		CHECK_INT(got.len, want.len);
		CHECK(got.len == want.len && memcmp(got.data, want.data, got.len) == 0);
		if (threads == 1)
			buf_append(&all1, all.data, all.len);
		CHECK(all.len == all1.len && memcmp(all.data, all1.data, all.len) == 0);
		buf_free(&got);
		buf_free(&all);
	}
	buf_free(&all1);
	buf_free(&want);
	buf_free(&err);
	buf_free(&path);
	analysis_config_free(&cfg);
	trace_set_free(&set);
}

TEST(analyze_run_same_tables_as_sequential_one_file)
{
	check_same("ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", NULL, 0, false);
	check_same("critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz", NULL, 0, true);
}

TEST(analyze_run_same_tables_as_sequential_two_ranks)
{
	check_same("trace_filter", NULL, 0, false);
	check_same("trace_filter", NULL, 0, true);
	static const int one[] = {1};
	check_same("trace_filter", one, 1, false);
	/* no selected rank in the set: the notes say so, the same way */
	static const int none[] = {7};
	check_same("trace_filter", none, 1, false);
}
