/*
 * config.c - the options of every analysis and shared step of the table
 * (analysis_config, analysis.h): one block each, initialised from its
 * defaults, and every option row bound to its block, so that the CLI
 * parses all analyses' options with one args table and the runner hands
 * each task its analysis's block.  A few small allocations per command.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"

static void add_def(struct analysis_config *c, const struct analysis_optdef *d)
{
	if (!d->size)
		return;
	for (size_t i = 0; i < c->n; i++)
		if (c->defs[i] == d)
			return; /* a step shared by several analyses: its options once */
	c->defs = xrealloc(c->defs, (c->n + 1) * sizeof *c->defs);
	c->blocks = xrealloc(c->blocks, (c->n + 1) * sizeof *c->blocks);
	void *b = xmalloc(d->size);
	memcpy(b, d->defaults, d->size);
	c->defs[c->n] = d;
	c->blocks[c->n++] = b;
	for (const struct analysis_opt *o = d->rows; o && o->arg.name; o++) {
		struct arg_opt *same = NULL;
		for (size_t k = 0; k < c->nrows && !same; k++)
			if (strcmp(c->rows[k].name, o->arg.name) == 0 && c->rows[k].type == o->arg.type)
				same = &c->rows[k];
		if (same) {
			/* one option of the command line for both analyses */
			static const size_t size[] = {[ARG_BOOL] = sizeof(bool), [ARG_INT] = sizeof(int64_t),
						      [ARG_DOUBLE] = sizeof(double),
						      [ARG_STRING] = sizeof(const char *)};
			c->aliases = xrealloc(c->aliases, (c->naliases + 1) * sizeof *c->aliases);
			c->aliases[c->naliases++] =
				(struct analysis_alias){(char *)b + o->offset, (size_t)(same - c->rows), size[o->arg.type]};
			continue;
		}
		c->rows = xrealloc(c->rows, (c->nrows + 1) * sizeof *c->rows);
		struct arg_opt *row = &c->rows[c->nrows++];
		*row = o->arg;
		row->ptr = (char *)b + o->offset;
		row->seen = NULL;
	}
}

void analysis_config_init(struct analysis_config *c)
{
	memset(c, 0, sizeof *c);
	/* in table order, an analysis's own options before its step's:
	 * the order --help lists them in */
	for (size_t i = 0; i < ANALYSIS_COUNT; i++) {
		add_def(c, &analysis_list[i]->opts);
		if (analysis_list[i]->prepare)
			add_def(c, &analysis_list[i]->prepare->opts);
	}
}

void *analysis_config_opts(const struct analysis_config *c, const struct analysis_optdef *d)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->defs[i] == d)
			return c->blocks[i];
	return NULL; /* no options */
}

int analysis_config_check(const struct analysis_config *c, struct buf *err)
{
	for (size_t i = 0; i < c->naliases; i++)
		memcpy(c->aliases[i].dst, c->rows[c->aliases[i].row].ptr, c->aliases[i].size);
	for (size_t i = 0; i < c->n; i++)
		if (c->defs[i]->check && c->defs[i]->check(c->blocks[i], err) != 0)
			return -1;
	return 0;
}

void analysis_config_free(struct analysis_config *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->blocks[i]);
	free(c->blocks);
	free(c->defs);
	free(c->rows);
	free(c->aliases);
	memset(c, 0, sizeof *c);
}
