/*
 * view.c - rank selection (and its text form, "0,3" of --ranks) and rank
 * views of a trace_set (analysis.h): a
 * set that shares some ranks of another, so that an analysis written over
 * "every rank of a set" runs on a selection or on one rank without knowing
 * it.  A view copies rank pointers only (O(ranks)).  Also the note the
 * kernel tables give for ranks of a view without GPU rows, and the reason
 * summary gives for skipping an analysis that needs them (a scan that
 * stops at the first GPU row).
 */
#include <errno.h>
#include <stdlib.h>

#include "analyze/analysis.h"

int analyze_ranks_parse(const char *s, int **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (!s || !*s)
		return 0;
	size_t cap = 0;
	const char *p = s;
	while (*p) {
		char *end;
		errno = 0;
		long v = strtol(p, &end, 10);
		if (end == p || errno || v < 0 || v > 1000000000L || (*end && *end != ',')) {
			free(*out);
			*out = NULL;
			*n = 0;
			return -1;
		}
		if (*n == cap) {
			cap = cap ? cap * 2 : 8;
			*out = xrealloc(*out, cap * sizeof **out);
		}
		(*out)[(*n)++] = (int)v;
		p = *end ? end + 1 : end;
	}
	return 0;
}

int analyze_ranks_check(const struct trace_set *set, const struct analyze_ranks *sel, const char *where,
			struct buf *err)
{
	for (size_t i = 0; sel && i < sel->n; i++) {
		bool found = false;
		for (size_t k = 0; k < set->nranks; k++)
			found |= set->ranks[k]->rank == sel->ranks[i];
		if (!found) {
			buf_printf(err, "rank %d is not in %s (ranks:", sel->ranks[i], where);
			for (size_t k = 0; k < set->nranks; k++)
				buf_printf(err, " %d", set->ranks[k]->rank);
			buf_puts(err, ")");
			return -1;
		}
	}
	return 0;
}

bool analyze_rank_selected(const struct analyze_ranks *sel, int rank)
{
	if (!sel || sel->n == 0)
		return true;
	for (size_t i = 0; i < sel->n; i++)
		if (sel->ranks[i] == rank)
			return true;
	return false;
}

struct trace_set analyze_view(const struct trace_set *set, const struct analyze_ranks *sel)
{
	struct trace_set v = *set;
	v.ranks = xmalloc((set->nranks ? set->nranks : 1) * sizeof *v.ranks);
	v.nranks = 0;
	for (size_t k = 0; k < set->nranks; k++)
		if (analyze_rank_selected(sel, set->ranks[k]->rank))
			v.ranks[v.nranks++] = set->ranks[k];
	return v;
}

struct trace_set analyze_view_rank(const struct trace_set *set, size_t k)
{
	struct trace_set v = *set;
	v.ranks = &set->ranks[k];
	v.nranks = 1;
	return v;
}

/* Ranks of the view with no row on a stream: the analyses have nothing to
 * say about them, which is not the same as zero. */
void analyze_note_no_gpu(struct atable *t, const struct trace_set *v, const char *what)
{
	if (v->nranks == 0)
		atable_note(t, "none of the selected ranks is in the trace: no %s", what);
	for (size_t k = 0; k < v->nranks; k++) {
		const struct trace_rank *r = v->ranks[k];
		size_t i = 0;
		while (i < r->n && !trace_is_gpu(r, i))
			i++;
		if (i == r->n)
			atable_note(t, "rank %d: no GPU events (no row has a stream): no %s", r->rank, what);
	}
}


const char *analyze_skip_no_gpu(const void *opts, const struct trace_set *view)
{
	(void)opts;
	for (size_t k = 0; k < view->nranks; k++) {
		const struct trace_rank *r = view->ranks[k];
		for (size_t i = 0; i < r->n; i++)
			if (trace_is_gpu(r, i))
				return NULL;
	}
	return "no GPU events (no row has a stream)";
}
