/*
 * set.c - loading a trace or a directory of traces (one per rank) as a
 * struct trace_set, then HTA's cross-rank steps (semantics doc 1.3):
 *
 *   - the inputs are files, directories (their *.json / *.json.gz entries)
 *     and "-" (stdin, read whole into memory), all the ranks of one set;
 *   - a directory's *.json / *.json.gz entries are loaded in parallel by
 *     min(files, cores) threads (par_for), each parsing whole files (a rank
 *     is one file, so there is no shared state but par_for's task counter);
 *     trace_set_from_rank() makes the same set of one rank loaded alone;
 *   - a rank a file declares (distributedInfo.rank, rank-N in its name,
 *     --rank) wins over the default 0; files without one get distinct ranks
 *     (assign_default_ranks), so none is dropped for lack of a rank;
 *   - ranks are sorted ascending; a rank declared by two files keeps the
 *     later file in name order, with a warning naming both (HTA keeps the
 *     later in listing order, which is unspecified);
 *   - alignment: the global minimum ts is subtracted from every rank;
 *   - last-step filter: with at least two distinct ProfilerStep#N names over
 *     all ranks, each rank keeps its CPU rows that start before the last
 *     step's start, and the GPU rows whose correlation matches a kept CPU
 *     row (once per match, like HTA's inner join); the table becomes the kept
 *     GPU rows followed by the kept CPU rows, and the links renumbered (or
 *     recomputed when renumbering would not give the same; see
 *     relink_renumbered).  An
 *     MTIA rank's rows are chosen by HTA's MTIA rule (filter_mtia.c); either
 *     way this file gathers the kept rows, walking the column table.
 * Costs: the loads dominate; the filter is a count per correlation (from
 * the links, or a radix sort by correlation) and one gather of every
 * column per rank, ranks on parallel threads.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/par.h"
#include "trace/columns.h"
#include "trace/filter_mtia.h"
#include "trace/load_internal.h"
#include "trace/rsort.h"

static bool has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && strcmp(s + n - m, suf) == 0;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct job {
	char **paths;
	const struct trace_load_opts *opts;
	unsigned split_threads; /* threads one file's parse may use */
	struct trace_rank **out;
	struct buf *errs;
};

/* A trace on stdin (plain or gzip, by its first bytes), read whole into
 * memory first: a pipe cannot be mapped or read twice. */
static struct trace_rank *load_stdin(const struct trace_load_opts *opts, struct buf *err)
{
	struct buf in = BUF_INIT;
	char tmp[1 << 16];
	size_t n;
	while ((n = fread(tmp, 1, sizeof tmp, stdin)) > 0)
		buf_append(&in, tmp, n);
	if (ferror(stdin)) {
		buf_printf(err, "-: %s", strerror(errno));
		buf_free(&in);
		return NULL;
	}
	struct trace_rank *r = trace_rank_load_mem("-", in.data, in.len, opts, err);
	buf_free(&in);
	return r;
}

/* One file of the set (a par_for task: it writes out[i] and errs[i] only). */
static void load_one(void *ctx, size_t i)
{
	struct job *j = ctx;
	int64_t t0 = clock_mono_ns();
	if (strcmp(j->paths[i], "-") == 0)
		j->out[i] = load_stdin(j->opts, &j->errs[i]);
	else
		j->out[i] = trace_rank_load_ex(j->paths[i], j->opts, j->split_threads, &j->errs[i]);
	if (j->out[i])
		j->out[i]->load_s = (double)(clock_mono_ns() - t0) / 1e9;
}

/* err ends with the loader's "not a Kineto trace" (TRACE_ERR_NOT_KINETO) */
static bool not_kineto(const char *err)
{
	size_t n = strlen(err), m = strlen(TRACE_ERR_NOT_KINETO);
	return n >= m && strcmp(err + n - m, TRACE_ERR_NOT_KINETO) == 0;
}

static int rank_cmp(const void *a, const void *b)
{
	const struct trace_rank *x = *(struct trace_rank *const *)a, *y = *(struct trace_rank *const *)b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return strcmp(x->path, y->path);
}

static void warn(struct buf *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct buf *w, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(w, fmt, ap);
	va_end(ap);
	buf_putc(w, '\n');
}

/* The pid in a name like trace_<pid>.json or host_<pid>.<ts>.pt.trace.json
 * (what `dyno gputrace` and Kineto write): the digits after the last '_'
 * of the base name up to its first '.'; -1 if none. */
static long pid_from_name(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *dot = strchr(base, '.');
	const char *end = dot ? dot : base + strlen(base);
	const char *d = end;
	while (d > base && d[-1] >= '0' && d[-1] <= '9')
		d--;
	if (d == end || d == base || d[-1] != '_' || end - d > 9)
		return -1;
	return strtol(d, NULL, 10);
}

static bool rank_taken(struct trace_rank **r, size_t n, long rank)
{
	for (size_t i = 0; i < n; i++)
		if (r[i]->rank_rule != TRACE_RANK_DEFAULT && r[i]->rank == rank)
			return true;
	return false;
}

/* Files whose rank is only the default 0 (no distributedInfo.rank, no
 * rank-N in the name, no --rank; r is in file name order): a rank a file
 * declares always wins, so a lone such file keeps 0 (HTA's default) only
 * if no file declares 0; otherwise every such file gets a distinct rank, by
 * one rule said in one line: the _<pid> of the names when every one has a
 * distinct pid that no file declares as its rank, else the smallest ranks
 * no file declares, in file name order.  No file is dropped. */
static void assign_default_ranks(struct trace_rank **r, size_t n, struct buf *w)
{
	size_t nd = 0;
	for (size_t i = 0; i < n; i++)
		nd += r[i]->rank_rule == TRACE_RANK_DEFAULT;
	if (nd == 0 || (nd == 1 && !rank_taken(r, n, 0)))
		return;
	bool by_pid = true;
	for (size_t i = 0; i < n && by_pid; i++) {
		if (r[i]->rank_rule != TRACE_RANK_DEFAULT)
			continue;
		long pid = pid_from_name(r[i]->path);
		by_pid = pid >= 0 && pid <= INT32_MAX && !rank_taken(r, n, pid);
		for (size_t k = 0; k < i && by_pid; k++)
			by_pid = r[k]->rank_rule != TRACE_RANK_DEFAULT || pid_from_name(r[k]->path) != pid;
	}
	long next = 0;
	for (size_t i = 0; i < n; i++) {
		if (r[i]->rank_rule != TRACE_RANK_DEFAULT)
			continue;
		if (by_pid) {
			r[i]->rank = (int)pid_from_name(r[i]->path);
		} else {
			while (rank_taken(r, n, next))
				next++;
			r[i]->rank = (int)next++;
		}
		r[i]->rank_rule = TRACE_RANK_ASSIGNED;
	}
	if (by_pid)
		warn(w, "%zu file(s) without a rank: each is given the pid in its name (_<pid>) as its rank", nd);
	else
		warn(w, "%zu file(s) without a rank: given the lowest ranks no file declares, in file name order",
		     nd);
}

/* The ranks (ascending, distinct) become the set's: each one's warnings
 * (where its rank came from, what the loader skipped) after those in w,
 * then trace_set_finish. */
static void set_adopt(struct trace_set *set, struct trace_rank **ranks, size_t n, struct buf *w,
		      const struct trace_load_opts *opts)
{
	set->ranks = ranks;
	set->nranks = n;
	for (size_t i = 0; i < n; i++) {
		struct trace_rank *r = ranks[i];
		/* assigned ranks were said in one line already */
		if (r->rank_rule != TRACE_RANK_DISTINFO && r->rank_rule != TRACE_RANK_ASSIGNED)
			warn(w, "%s: rank %d from %s", r->path, r->rank, trace_rank_rule_name(r->rank_rule));
		struct buf d = BUF_INIT;
		trace_load_stats_describe(r, &d);
		if (d.len)
			warn(w, "%s: %s", r->path, d.data);
		buf_free(&d);
	}
	set->warnings = buf_detach(w, NULL);
	trace_set_finish(set, opts);
}

/* Add the trace files of path to *paths (model.h). */
int trace_list_path(const char *path, char ***paths, size_t *np, size_t *cap, struct buf *err)
{
	struct stat st;
	if (strcmp(path, "-") != 0 && stat(path, &st) != 0) {
		buf_printf(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (strcmp(path, "-") == 0 || !S_ISDIR(st.st_mode)) {
		if (*np == *cap) {
			*cap = *cap ? *cap * 2 : 16;
			*paths = xrealloc(*paths, *cap * sizeof **paths);
		}
		(*paths)[(*np)++] = xstrdup(path);
		return 0;
	}
	DIR *d = opendir(path);
	if (!d) {
		buf_printf(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	size_t first = *np;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (!has_suffix(de->d_name, ".json") && !has_suffix(de->d_name, ".gz"))
			continue;
		if (*np == *cap) {
			*cap = *cap ? *cap * 2 : 16;
			*paths = xrealloc(*paths, *cap * sizeof **paths);
		}
		struct buf p = BUF_INIT;
		buf_printf(&p, "%s/%s", path, de->d_name);
		(*paths)[(*np)++] = buf_detach(&p, NULL);
	}
	closedir(d);
	if (*np == first) {
		buf_printf(err, "%s: no *.json or *.json.gz trace files in this directory", path);
		return -1;
	}
	qsort(*paths + first, *np - first, sizeof **paths, str_cmp);
	return 0;
}

int trace_set_load(struct trace_set *set, const char *path, const struct trace_load_opts *opts,
		   struct buf *err)
{
	return trace_set_load_paths(set, &path, 1, opts, err);
}

int trace_set_load_paths(struct trace_set *set, const char *const *inputs, size_t ninputs,
			 const struct trace_load_opts *opts, struct buf *err)
{
	static const struct trace_load_opts dflt;
	if (!opts)
		opts = &dflt;
	memset(set, 0, sizeof *set);
	char **paths = NULL;
	size_t np = 0, cap = 0, nstdin = 0;
	for (size_t i = 0; i < ninputs; i++) {
		nstdin += strcmp(inputs[i], "-") == 0;
		if (nstdin > 1) {
			buf_puts(err, "-: stdin can be read once only");
		}
		if (nstdin > 1 || trace_list_path(inputs[i], &paths, &np, &cap, err) != 0) {
			for (size_t k = 0; k < np; k++)
				free(paths[k]);
			free(paths);
			return -1;
		}
	}
	if (np == 0) {
		buf_puts(err, "no trace given");
		free(paths);
		return -1;
	}

	struct job j = {.paths = paths, .opts = opts};
	j.out = xcalloc(np, sizeof *j.out);
	j.errs = xcalloc(np, sizeof *j.errs);
	for (size_t i = 0; i < np; i++)
		buf_init(&j.errs[i]);
	int cores = par_threads(opts->threads);
	/* spare cores: a big file may use its share of them */
	j.split_threads = np < (size_t)cores ? (unsigned)((size_t)cores / np) : 1;
	par_for(np, cores, load_one, &j); /* min(files, cores) threads */

	int rc = 0;
	struct buf w = BUF_INIT;
	size_t loaded = 0, not_traces = 0;
	for (size_t i = 0; i < np; i++)
		loaded += j.out[i] != NULL;
	for (size_t i = 0; i < np; i++) {
		/* one policy for `dyno analyze` and `dyno report`: a file of the
		 * set that is no trace at all (a config.json in the directory)
		 * is named and left out, and the results are not partial for it */
		if (!j.out[i] && loaded > 0 && not_kineto(j.errs[i].data)) {
			warn(&w, "%s; this file is left out", j.errs[i].data);
			not_traces++;
		} else if (!j.out[i] && opts->skip_unreadable && loaded > 0) {
			/* the others are worth reading: say which one is not */
			warn(&w, "%s; this file is left out", j.errs[i].data);
		} else if (!j.out[i]) {
			if (rc == 0)
				buf_append(err, j.errs[i].data, j.errs[i].len);
			rc = -1;
		}
		buf_free(&j.errs[i]);
		free(paths[i]);
	}
	free(j.errs);
	free(paths);
	if (rc) {
		for (size_t i = 0; i < np; i++)
			trace_rank_free(j.out[i]);
		free(j.out);
		buf_free(&w);
		return -1;
	}
	size_t left_out = np - loaded - not_traces;
	if (loaded < np) { /* the files left out */
		size_t k = 0;
		for (size_t i = 0; i < np; i++)
			if (j.out[i])
				j.out[k++] = j.out[i];
		np = k;
	}
	assign_default_ranks(j.out, np, &w);
	qsort(j.out, np, sizeof *j.out, rank_cmp);
	size_t k = 0;
	for (size_t i = 0; i < np; i++) {
		if (k > 0 && j.out[k - 1]->rank == j.out[i]->rank) {
			/* two files declare the same rank themselves (distributedInfo,
			 * name or --rank): HTA keeps one; say which is left out */
			warn(&w, "rank %d is declared by both %s and %s; analysing %s, %s left out", j.out[i]->rank,
			     j.out[k - 1]->path, j.out[i]->path, j.out[i]->path, j.out[k - 1]->path);
			trace_rank_free(j.out[k - 1]);
			j.out[k - 1] = j.out[i];
			continue;
		}
		j.out[k++] = j.out[i];
	}
	set_adopt(set, j.out, k, &w, opts);
	set->left_out = left_out;
	return 0;
}

void trace_set_from_rank(struct trace_set *set, struct trace_rank *r, const struct trace_load_opts *opts)
{
	memset(set, 0, sizeof *set);
	struct trace_rank **ranks = xmalloc(sizeof *ranks);
	ranks[0] = r;
	struct buf w = BUF_INIT;
	set_adopt(set, ranks, 1, &w, opts);
}

void trace_set_free(struct trace_set *set)
{
	for (size_t i = 0; i < set->nranks; i++)
		trace_rank_free(set->ranks[i]);
	free(set->ranks);
	free(set->warnings);
	memset(set, 0, sizeof *set);
}

#define MAX_DUP 16

/* mult[i] = how many kept CPU rows share GPU row i's correlation (0 for
 * the other rows): the kept CPU rows and the GPU rows sorted together by
 * correlation (stable radix sort), then one count per run. */
static void count_matches(const struct trace_rank *r, const bool *gpu, double last_start, uint32_t *mult)
{
	if (r->link_one_cpu) {
		/* no id with two CPU rows (Kineto's one launch per id): a GPU
		 * row's CPU row is its link (trace_rank_link), and the rows
		 * without an id (-1) are one id of their own, so no sort (0.6 ms
		 * of trace_diff/control's summary, on the critical path) */
		uint32_t none = 0; /* kept CPU rows without an id */
		for (size_t i = 0; i < r->n; i++)
			none += !gpu[i] & (r->ts[i] < last_start) & (r->correlation[i] == -1);
		for (size_t i = 0; i < r->n; i++) {
			int32_t l = r->link[i];
			mult[i] = !gpu[i]                  ? 0
				  : r->correlation[i] == -1 ? none
				  : l >= 0                  ? (uint32_t)(r->ts[l] < last_start)
							    : 0;
		}
		return;
	}
	size_t m = 0;
	for (size_t i = 0; i < r->n; i++) {
		mult[i] = 0;
		m += gpu[i] | (r->ts[i] < last_start);
	}
	/* appended by advancing past the rows that count, no branch per row
	 * (one slot spare) */
	uint64_t *key = xmalloc((m + 1) * sizeof *key);
	uint32_t *row = xmalloc((m + 1) * sizeof *row);
	size_t k = 0;
	for (size_t i = 0; i < r->n; i++) {
		key[k] = rsort_key_i64(r->correlation[i]);
		row[k] = (uint32_t)i;
		k += gpu[i] | (r->ts[i] < last_start);
	}
	rsort_kv(key, row, m);
	for (size_t a = 0; a < m;) {
		size_t b = a + 1, ncpu = 0;
		while (b < m && key[b] == key[a])
			b++;
		for (size_t j = a; j < b; j++)
			ncpu += !gpu[row[j]];
		for (size_t j = a; ncpu && j < b; j++)
			if (gpu[row[j]])
				mult[row[j]] = ncpu > UINT32_MAX ? UINT32_MAX : (uint32_t)ncpu;
		a = b;
	}
	free(key);
	free(row);
}

/* The filter's new table: column c of the rank becomes col[src[j]] for
 * j < n.  Gathered into a scratch array and copied back into the column's
 * own memory (grown if the join added rows), so the peak is one column
 * more, and the pages the loader touched are reused instead of faulting
 * in fresh ones for every column. */
struct gather_job {
	struct trace_rank *r;
	const uint32_t *src;
	size_t n;
	size_t ngroups;
};

/* Columns c with c % ngroups == gi (alternate columns: the groups carry
 * about the same bytes), through one scratch array; groups touch disjoint
 * columns of the rank, so they can run on different threads.  Rows are
 * moved as whole 1-, 4- or 8-byte values (doubles by their bits). */
static void gather_group(void *ctx, size_t gi)
{
	struct gather_job *g = ctx;
	struct trace_rank *r = g->r;
	const uint32_t *src = g->src;
	size_t n = g->n;
	void *scratch = xmalloc((n ? n : 1) * sizeof(double));
	for (size_t c = gi; c < TRACE_NCOLS; c += g->ngroups) {
		if (!trace_col_kept(r, c))
			continue;
		void **col = trace_col(r, c);
		size_t size = trace_columns[c].size;
		trace_col_gather(scratch, *col, size, src, n);
		if (n > r->cap)
			trace_col_resize(r, c, n);
		memcpy(*col, scratch, n * size);
	}
	free(scratch);
}

/* HTA 1.3 on one rank: the CPU rows before the last step start and the GPU
 * rows a kept CPU row launched (once per such row), GPU rows first; returns
 * how many, their source rows in *src_out. */
static size_t last_step_rows(struct trace_rank *r, uint32_t **src_out)
{
	/* CPU rows (not the correlation-GPU rule) named ProfilerStep#N */
	bool *step = xcalloc(r->strs.n ? r->strs.n : 1, sizeof *step);
	for (uint32_t id = 0; id < r->strs.n; id++)
		step[id] = trace_is_step_name(r->strs.s[id]);
	uint32_t ev_sync = trace_strtab_find(&r->strs, "Event Sync", 10);
	uint32_t ctx_sync = trace_strtab_find(&r->strs, "Context Sync", 12);
	bool *gpu = xmalloc((r->n ? r->n : 1) * sizeof *gpu);
	double last_start = -INFINITY;
	bool any = false;
	for (size_t i = 0; i < r->n; i++) {
		gpu[i] = trace_row_corr_gpu(r, i, ev_sync, ctx_sync);
		if (!gpu[i] && step[r->name[i]] && (!any || r->ts[i] > last_start)) {
			last_start = r->ts[i];
			any = true;
		}
	}
	free(step);
	if (!any) {
		/* no step on this rank: HTA's max() is NaN and ts < NaN keeps
		 * no CPU row, hence no GPU row either */
		last_start = -INFINITY;
	}
	size_t nkeep_cpu = 0;
	for (size_t i = 0; i < r->n; i++)
		nkeep_cpu += !gpu[i] & (r->ts[i] < last_start);
	/* count kept CPU rows per correlation, then the copies of each GPU row */
	size_t out_n = nkeep_cpu;
	uint32_t *mult = xmalloc((r->n ? r->n : 1) * sizeof *mult);
	count_matches(r, gpu, last_start, mult);
	for (size_t i = 0; i < r->n; i++) {
		if (!gpu[i])
			continue;
		size_t cnt = mult[i];
		/* a GPU row without a correlation (an Event/Context Sync with -1)
		 * would be copied once per uncorrelated CPU row by HTA's join:
		 * quadratic; keep it once */
		if (r->correlation[i] == -1 && cnt > 1)
			cnt = 1;
		/* likewise a correlation id shared by many CPU rows (a broken
		 * trace): at most MAX_DUP copies, counted */
		if (cnt > MAX_DUP) {
			r->stats.dup_correlation_capped += cnt - MAX_DUP;
			cnt = MAX_DUP;
		}
		mult[i] = (uint32_t)cnt;
		out_n += cnt;
	}
	/* source row of every output row */
	uint32_t *src = xmalloc((out_n + 1) * sizeof *src);
	size_t o = 0;
	for (size_t i = 0; i < r->n; i++)
		for (uint32_t k = 0; k < mult[i]; k++)
			src[o++] = (uint32_t)i;
	for (size_t i = 0; i < r->n; i++) {
		src[o] = (uint32_t)i;
		o += !gpu[i] & (r->ts[i] < last_start);
	}
	free(mult);
	free(gpu);
	*src_out = src;
	return out_n;
}

/*
 * The links after the rows were replaced by rows src[0..n) of a table of
 * old_n rows, their old links gathered with them: each renumbered, which is
 * what trace_rank_link would give when (1) the rows of each side (CPU,
 * GPU) are in their old order, none twice (the last-step filter puts the
 * GPU rows first; each side stays in order), and (2) every old link's row
 * is still there.  A link goes to the last row of the other side of its
 * correlation; that row, kept, is still the last of its side among the
 * kept rows, and a row that had no link still lacks the other side.  With
 * link_one_cpu already true it stays true (a subset).  Returns false, the
 * links half rewritten, when a condition fails: then the caller links
 * again.  Cost: two passes and a map of old_n rows, against
 * trace_rank_link's sort (trace_diff/control's last-step filter: ~0.35 ms
 * -> ~0.05 ms, on the critical path: one rank's set steps run on one
 * thread).
 */
static bool relink_renumbered(struct trace_rank *r, const uint32_t *src, size_t n, size_t old_n)
{
	uint32_t ev_sync = trace_strtab_find(&r->strs, "Event Sync", 10);
	uint32_t ctx_sync = trace_strtab_find(&r->strs, "Context Sync", 12);
	int32_t *to = xmalloc((old_n ? old_n : 1) * sizeof *to);
	memset(to, 0xff, (old_n ? old_n : 1) * sizeof *to);
	bool ok = true;
	uint32_t last[2] = {0, 0};
	bool any[2] = {false, false};
	for (size_t j = 0; j < n && ok; j++) {
		uint32_t s = src[j];
		to[s] = (int32_t)j;
		/* a row with an id: after the last of its side (so never twice;
		 * a row without one is no link's target and has none) */
		if (r->correlation[j] == -1)
			continue;
		int side = trace_row_corr_gpu(r, j, ev_sync, ctx_sync);
		ok &= !any[side] || s > last[side];
		any[side] = true;
		last[side] = s;
	}
	for (size_t j = 0; j < n && ok; j++) {
		int32_t l = r->link[j];
		if (l < 0)
			continue;
		ok = to[l] >= 0;
		r->link[j] = to[l];
	}
	free(to);
	return ok;
}

/* Replace the rank's rows by rows src[0..out_n) of the current table (a
 * row may repeat), column by column on up to `threads` threads; links and
 * the iteration list are recomputed. */
void trace_rank_keep_rows(struct trace_rank *r, const uint32_t *src, size_t out_n, int threads)
{
	size_t old_n = r->n;
	/* gather the columns, split over threads (columns are disjoint) */
	struct gather_job g = {r, src, out_n, threads >= 2 ? 2 : 1};
	par_for(g.ngroups, threads, gather_group, &g);
	if (out_n > r->cap)
		r->cap = out_n;
	r->n = out_n;
	r->stats.kept = r->n;
	if (!r->link_one_cpu || !relink_renumbered(r, src, out_n, old_n))
		trace_rank_link(r);
	trace_rank_list_iterations(r);
}

struct finish_job {
	struct trace_set *set;
	double min_ts;
	bool filter;
	int col_threads; /* threads for one rank's column gather */
};

/* One rank's part of trace_set_finish: alignment, then the filter.  Runs
 * in a par_for task; it writes only its own rank. */
static void finish_rank(void *ctx, size_t k)
{
	struct finish_job *j = ctx;
	struct trace_rank *r = j->set->ranks[k];
	double min_ts = j->min_ts;
	for (size_t i = 0; i < r->n; i++)
		r->ts[i] -= min_ts;
	for (size_t i = 0; i < r->nflows; i++)
		r->flows[i].ts -= min_ts;
	for (size_t i = 0; i < r->ncounters; i++)
		r->counters[i].ts -= min_ts;
	r->min_ts = min_ts;
	if (!j->filter)
		return;
	uint32_t *src;
	size_t n;
	if (r->gpu_device_mtia || strcmp(r->device_type, "MTIA") == 0)
		n = trace_filter_mtia_rows(r, &src); /* HTA's rule differs (filter_mtia.c) */
	else
		n = last_step_rows(r, &src);
	r->stats.dropped_last_step += r->n > n ? r->n - n : 0;
	trace_rank_keep_rows(r, src, n, j->col_threads);
	free(src);
}

/* Does rank r have a row named ProfilerStep#N other than *first (sets
 * *first to the first one seen)?  Returns the distinct count, at most 2. */
static size_t step_names(const struct trace_rank *r, const char **first, size_t nsteps)
{
	/* only names of rows count (the table may hold names of dropped events) */
	bool *used = xcalloc(r->strs.n ? r->strs.n : 1, sizeof *used);
	for (size_t i = 0; i < r->n; i++)
		used[r->name[i]] = true;
	for (uint32_t id = 0; id < r->strs.n && nsteps < 2; id++) {
		if (!used[id] || !trace_is_step_name(r->strs.s[id]))
			continue;
		if (!*first) {
			*first = r->strs.s[id];
			nsteps = 1;
		} else if (strcmp(*first, r->strs.s[id]) != 0) {
			nsteps = 2;
		}
	}
	free(used);
	return nsteps;
}

void trace_set_finish(struct trace_set *set, const struct trace_load_opts *opts)
{
	static const struct trace_load_opts dflt;
	if (!opts)
		opts = &dflt;
	int64_t t0 = clock_mono_ns();
	double min_ts = INFINITY;
	for (size_t k = 0; k < set->nranks; k++) {
		struct trace_rank *r = set->ranks[k];
		for (size_t i = 0; i < r->n; i++)
			if (r->ts[i] < min_ts)
				min_ts = r->ts[i];
		if (r->skipped_min_ts < min_ts)
			min_ts = r->skipped_min_ts;
	}
	if (min_ts == INFINITY)
		min_ts = 0;
	set->min_ts = min_ts;
	/* distinct ProfilerStep#N names over all ranks (alignment does not
	 * change names) */
	size_t nsteps = 0;
	const char *first = NULL;
	for (size_t k = 0; k < set->nranks && nsteps < 2; k++)
		nsteps = step_names(set->ranks[k], &first, nsteps);
	set->filtered = nsteps >= 2 && !opts->keep_last_step;
	/* each rank aligned and filtered on its own thread: ranks share nothing */
	int threads = par_threads(opts->threads);
	struct finish_job j = {set, min_ts, set->filtered,
			       set->nranks < (size_t)threads ? threads / (int)(set->nranks ? set->nranks : 1) : 1};
	par_for(set->nranks, opts->threads, finish_rank, &j);
	set->finish_s = (double)(clock_mono_ns() - t0) / 1e9;
}
