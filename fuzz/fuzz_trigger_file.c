/*
 * fuzz_trigger_file.c - libFuzzer target for the daemon's trigger file
 * (--trigger_file) and what addTrigger takes: the text goes through the
 * same parse as at start-up (the one JSON reader, every definition's
 * checks, the condition parser); what parses is written and parsed again,
 * and must come back as the same text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/trigger/trigger_store.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	struct trig_file f;
	struct buf err = BUF_INIT, a = BUF_INIT, b = BUF_INIT;
	if (trig_file_parse("fuzz", (const char *)d, n, 16, &f, &err)) {
		trig_file_text(&f, &a);
		struct trig_file g;
		if (!trig_file_parse("again", a.data, a.len, 16, &g, &err))
			abort(); /* what we write, we must read */
		trig_file_text(&g, &b);
		if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0)
			abort();
		trig_file_free(&g);
		trig_file_free(&f);
	}
	buf_free(&err);
	buf_free(&a);
	buf_free(&b);
	return 0;
}
