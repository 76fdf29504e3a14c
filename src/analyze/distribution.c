/*
 * distribution.c - kernel duration distribution across ranks (see
 * distribution.h).  kernel_metrics rows are sorted by type, name, rank, so
 * the rows of one kernel name are consecutive: one pass groups them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/distribution.h"
#include "core/buf.h"

void kernel_dist_run(const struct kernel_breakdown *kb, struct kernel_dist *out)
{
	memset(out, 0, sizeof *out);
	out->rows = xcalloc(kb->nmetrics ? kb->nmetrics : 1, sizeof *out->rows);
	for (size_t i = 0; i < kb->nmetrics;) {
		const struct kernel_metric_row *m = &kb->metrics[i];
		size_t j = i + 1;
		while (j < kb->nmetrics && kb->metrics[j].type == m->type && strcmp(kb->metrics[j].name, m->name) == 0)
			j++;
		if (!m->others) {
			struct kernel_dist_row *d = &out->rows[out->nrows++];
			d->name = m->name;
			d->type = m->type;
			d->first = i;
			d->count = j - i;
			d->mean_lo = d->mean_hi = m->mean;
			d->rank_lo = d->rank_hi = m->rank;
			for (size_t k = i + 1; k < j; k++) {
				const struct kernel_metric_row *x = &kb->metrics[k];
				if (x->mean < d->mean_lo) {
					d->mean_lo = x->mean;
					d->rank_lo = x->rank;
				}
				if (x->mean > d->mean_hi) {
					d->mean_hi = x->mean;
					d->rank_hi = x->rank;
				}
			}
			d->spread = d->mean_lo > 0 ? d->mean_hi / d->mean_lo : NAN;
		}
		i = j;
	}
}

void kernel_dist_free(struct kernel_dist *kd)
{
	free(kd->rows);
	memset(kd, 0, sizeof *kd);
}
