/*
 * fuzz_gpusnoop.c - libFuzzer target for gpusnoop's readers of bytes it
 * does not control: the ELF symbol reader (any file a process maps, or a
 * --lib) and the validation of ring-buffer records by the ledger and the
 * sync table (cut here into records of every length, valid size or not,
 * dispatched by type as gpusnoop does), and the C++ demangler's wrapper
 * (symbol names come from the watched process's files: the input as a
 * name, as is and after "_Z").  None may crash, read out of bounds or
 * leak; a found symbol's offset must lie inside the input; the ledger's
 * live bytes must equal the sum of its leak groups and, per device, the
 * device memory and handles; the sync groups' counts the sync records
 * taken; a demangled name is never empty.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpusnoop/calls.h"
#include "gpusnoop/demangle.h"
#include "gpusnoop/elfsym.h"
#include "gpusnoop/ledger.h"
#include "gpusnoop/probes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = {"cudaMalloc", "cudaFree", "cuMemAlloc_v2", "a"};
	uint64_t offs[4];
	struct elf_mem m = {data, size};
	struct elf_src s = elf_src_mem(&m);
	struct buf err = BUF_INIT;
	int r = elfsym_find(&s, names, 4, offs, NULL, &err);
	if (r < 0 && err.len == 0)
		abort(); /* an error always says why */
	for (int i = 0; i < 4 && r > 0; i++)
		if (offs[i] >= size)
			abort();
	buf_free(&err);

	/* the bytes as a function's first instructions: where its probe goes */
	{
		char what[32];
		size_t skip = probe_entry_skip(data, size);
		if (skip > size || (skip && skip != 4))
			abort();
		enum probe_insn c = probe_insn_class(data + skip, size - skip, what, sizeof what);
		if ((c != INSN_EMULATED && c != INSN_STEPPED) || !what[0] || strlen(what) >= sizeof what)
			abort();
	}

	/* the bytes as a symbol name: as they are, and made to look mangled */
	size_t nlen = size < DEMANGLE_MAX_IN + 16 ? size : DEMANGLE_MAX_IN + 16;
	char *name = malloc(nlen + 3);
	memcpy(name, "_Z", 2);
	memcpy(name + 2, data, nlen);
	name[nlen + 2] = 0;
	for (int k = 0; k < 2; k++) {
		char *d = demangle(name + (k ? 0 : 2));
		if (d && !*d)
			abort();
		free(d);
	}
	free(name);

	struct ledger l;
	ledger_init(&l);
	struct calls c, kc;
	calls_init(&c);
	calls_init(&kc);
	size_t at = 0;
	while (at < size) {
		/* the first byte picks the record's length: mostly the real one */
		size_t len = data[at] < 200 ? sizeof(struct snoop_event) : data[at] % 64;
		at++;
		if (len > size - at)
			len = size - at;
		uint32_t type = 0;
		if (len >= sizeof(type))
			memcpy(&type, data + at, sizeof(type));
		if (type == EV_SYNC) {
			calls_sync_event(&c, data + at, len, NULL);
		} else if (type == 0xff && len >= 4 + sizeof(struct sync_group)) {
			/* a sync stack's totals as read from the kernel's map */
			struct sync_group sgin;
			memcpy(&sgin, data + at + 4, sizeof(sgin));
			calls_sync_group(&kc, &sgin);
		}
		else
			ledger_event(&l, data + at, len);
		at += len;
	}
	size_t n;
	struct ledger_leak *g = ledger_leaks(&l, &n);
	uint64_t sum[SPACE_COUNT] = {0}, count = 0;
	for (size_t i = 0; i < n; i++) {
		sum[g[i].space] = sum[g[i].space] > UINT64_MAX - g[i].bytes ? UINT64_MAX : sum[g[i].space] + g[i].bytes;
		count += g[i].count;
	}
	if (count != l.nlive)
		abort();
	for (int i = 0; i < SPACE_COUNT; i++)
		if (sum[i] != l.outstanding[i] && l.outstanding[i] != UINT64_MAX)
			abort();
	unsigned __int128 dev = 0;
	for (int i = 0; i < LEDGER_DEV_SLOTS; i++)
		dev += l.dev_exact[i];
	if (dev != l.exact[SPACE_PTR] + l.exact[SPACE_HANDLE])
		abort();
	free(g);
	ledger_free(&l);
	struct sync_group *sg = calls_sync_top(&c, &n);
	uint64_t syncs = 0;
	for (size_t i = 0; i < n; i++)
		syncs += sg[i].count;
	if (syncs != c.sync_records)
		abort();
	free(sg);
	calls_free(&c);
	sg = calls_sync_top(&kc, &n);
	if (n != kc.n)
		abort();
	for (size_t i = 0; i < n; i++)
		if (!sg[i].count || sg[i].stack_id < -1)
			abort();
	free(sg);
	calls_free(&kc);
	return 0;
}
