/* trigger_keys.c - see trigger_keys.h. */
#include "trigger_keys.h"

#include <stdio.h>
#include <string.h>

#include "daemon/collect/collector.h"
#include "daemon/publish/catalog.h"

#define NEAREST 3
#define NAME_MAX_LEN 96 /* a catalog key with its "<label>" */

/* Levenshtein distance of a and b, each cut to NAME_MAX_LEN bytes (keys
 * are at most TRIG_KEY_MAX; a longer one is far from everything anyway). */
static size_t distance(const char *a, const char *b)
{
	size_t na = strnlen(a, NAME_MAX_LEN), nb = strnlen(b, NAME_MAX_LEN);
	size_t row[NAME_MAX_LEN + 1];
	for (size_t j = 0; j <= nb; j++)
		row[j] = j;
	for (size_t i = 1; i <= na; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= nb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[nb];
}

/* Words ('_'-separated, 3 bytes or more) that a and b share: "cpu_iowait"
 * is nearer to "@cpu_ratio_iowait" than its edit distance says. */
static size_t shared_words(const char *a, const char *b)
{
	size_t n = 0;
	for (const char *p = a; *p;) {
		size_t len = strcspn(p, "_.@");
		if (len >= 3) {
			for (const char *q = b; *q;) {
				size_t l2 = strcspn(q, "_.@");
				if (l2 == len && memcmp(p, q, len) == 0) {
					n++;
					break;
				}
				q += l2 + (q[l2] != 0);
			}
		}
		p += len + (p[len] != 0);
	}
	return n;
}

struct near {
	char name[NAME_MAX_LEN];
	long score;
};

bool trig_key_known(const char *key, struct buf *why)
{
	const char *suffix;
	if (catalog_find(key, &suffix))
		return true;
	/* the base alone: what the user meant is the base, whatever the suffix */
	char base[NAME_MAX_LEN];
	snprintf(base, sizeof base, "%.*s", (int)strcspn(key, "."), key);
	struct near best[NEAREST];
	size_t nbest = 0;
	for (size_t c = 0; c < ncollectors; c++)
		for (size_t i = 0; i < collectors[c]->ncatalog; i++) {
			const struct metric_desc *d = &collectors[c]->catalog[i];
			struct near cand;
			if (d->suffixed)
				snprintf(cand.name, sizeof cand.name, "%s.<%s>", d->key, d->label ? d->label : "suffix");
			else
				snprintf(cand.name, sizeof cand.name, "%s", d->key);
			const char *plain = d->key[0] == '@' ? d->key + 1 : d->key;
			cand.score = (long)distance(base, plain) - 2 * (long)shared_words(base, plain);
			/* a running total since boot only grows: a poor condition */
			if (d->kind == MK_TOTAL)
				cand.score += 8;
			bool dup = false;
			for (size_t k = 0; k < nbest && !dup; k++)
				dup = strcmp(best[k].name, cand.name) == 0;
			if (dup)
				continue;
			/* insertion into the NEAREST best, by score then name */
			size_t at = nbest;
			while (at > 0 && (best[at - 1].score > cand.score ||
					  (best[at - 1].score == cand.score && strcmp(best[at - 1].name, cand.name) > 0)))
				at--;
			if (at >= NEAREST)
				continue;
			size_t last = nbest < NEAREST ? nbest : NEAREST - 1;
			memmove(&best[at + 1], &best[at], (last - at) * sizeof best[0]);
			best[at] = cand;
			if (nbest < NEAREST)
				nbest++;
		}
	const struct metric_desc *b = catalog_find(base, &suffix);
	if (b)
		buf_printf(why, "when: metric key '%s' takes no suffix", key);
	else if (strchr(key, '.') == NULL) {
		/* a suffixed key given without its suffix ("sm_active_ratio") */
		char probe[NAME_MAX_LEN + 2];
		snprintf(probe, sizeof probe, "%s.x", base);
		if (catalog_find(probe, &suffix))
			buf_printf(why, "when: metric key '%s' needs a suffix (e.g. %s.0 for a GPU, .eth0, .sda, .cpu0)",
				   key, key);
		else
			buf_printf(why, "when: no metric key '%s'", key);
	} else
		buf_printf(why, "when: no metric key '%s'", key);
	buf_puts(why, " (docs/metrics.md); closest:");
	for (size_t k = 0; k < nbest; k++)
		buf_printf(why, "%s %s", k ? "," : "", best[k].name);
	return false;
}
