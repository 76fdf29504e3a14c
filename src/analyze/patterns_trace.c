/*
 * patterns_trace.c - `dyno analyze patterns --patterns-trace OUT`: HTA's
 * overlaid trace of get_frequent_cuda_kernel_sequences.  The rank's trace
 * file is copied byte for byte, except that each event of a top-k pattern
 * (the roots, their descendants and their GPU rows) gets an arg
 * "Patterns": {"<pattern>": count}, searchable in Perfetto / Chrome
 * tracing.  HTA also replaces the names of every other complete event by
 * symbol ids to save memory (compress_other_kernels); we keep them (HTA's
 * compress_other_kernels=False), so the file is the original plus the
 * marks.  OUT is gzip when its name ends in ".gz".
 *
 * Cost: the file is read twice as a stream (trace_copy.c: a pass of the
 * JSON tokenizer that finds where each marked event's args object, or the
 * event, closes, then a byte copy that inserts the marks there); memory is
 * a read window, the marked events and their mark texts.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "analyze/trace_copy.h"
#include "core/json.h"

/* A marked event: its id and the row of its pattern. */
struct mark {
	uint32_t idx;
	int32_t pattern;
};

static int cmp_mark(const void *a, const void *b)
{
	const struct mark *x = a, *y = b;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/* the text inserted for event e, marked with row `pattern` of t */
static void mark_text(const struct tcopy_event *e, int32_t pattern, const struct atable *t, struct buf *b)
{
	bool into_args = e->args_end != UINT64_MAX;
	buf_puts(b, !into_args ? (e->no_members ? "\"args\":{" : ",\"args\":{") : e->args_empty ? "" : ",");
	buf_puts(b, "\"Patterns\":");
	struct jw w;
	jw_init(&w, b);
	jw_obj_begin(&w);
	jw_key(&w, atable_cell((struct atable *)t, (size_t)pattern, 0)->s);
	jw_i64(&w, atable_cell((struct atable *)t, (size_t)pattern, 1)->i);
	jw_obj_end(&w);
	if (!into_args)
		buf_putc(b, '}');
}

int patterns_write_trace(const struct trace_rank *r, const struct atable *t, const int32_t *marks, const char *out,
			 struct buf *err)
{
	size_t nm = 0;
	for (size_t i = 0; i < r->n; i++)
		nm += marks[i] >= 0 && (size_t)marks[i] < t->nrows;
	struct mark *ms = xmalloc((nm ? nm : 1) * sizeof *ms);
	nm = 0;
	for (size_t i = 0; i < r->n; i++)
		if (marks[i] >= 0 && (size_t)marks[i] < t->nrows)
			ms[nm++] = (struct mark){r->idx[i], marks[i]};
	qsort(ms, nm, sizeof *ms, cmp_mark);
	struct tcopy_event *ev = xmalloc((nm ? nm : 1) * sizeof *ev);
	for (size_t k = 0; k < nm; k++)
		ev[k] = (struct tcopy_event){.idx = ms[k].idx};
	struct tcopy_scan sc;
	if (tcopy_scan(r->path, ev, nm, &sc, err) != 0) {
		free(ev);
		free(ms);
		return -1;
	}
	/* the texts in one buffer first (it moves while it grows), then the
	 * insertions into it, in file order (event order); an event not
	 * found (the file changed?) is not marked */
	struct buf text = BUF_INIT;
	size_t *start = xmalloc((nm + 1) * sizeof *start);
	for (size_t k = 0; k < nm; k++) {
		start[k] = text.len;
		if (ev[k].found && !ev[k].args_other)
			mark_text(&ev[k], ms[k].pattern, t, &text);
	}
	start[nm] = text.len;
	struct tcopy_insert *ins = xmalloc((nm ? nm : 1) * sizeof *ins);
	size_t ni = 0;
	for (size_t k = 0; k < nm; k++)
		if (ev[k].found && !ev[k].args_other)
			ins[ni++] = (struct tcopy_insert){ev[k].args_end != UINT64_MAX ? ev[k].args_end : ev[k].obj_end,
							  text.data + start[k], start[k + 1] - start[k]};
	int rc = tcopy_write_trace(r->path, out, &sc, ins, ni, NULL, NULL, err);
	free(ins);
	free(start);
	buf_free(&text);
	tcopy_scan_free(&sc);
	free(ev);
	free(ms);
	return rc;
}
