/*
 * test_stitch.c - `dyno stitch`: on real traces of tests/data (and a
 * gpusnoop-style timeline), the stitched trace keeps every event of every
 * input in order (compared element by element with the input), moves each
 * input's ts by exactly its base time's difference (+ --offset), gives
 * every input's pids pids of their own with one name and one sort index
 * each, keeps flow ids apart, and passes Perfetto's nesting rules
 * (tests/lib/trace_check) whenever its inputs do.  Damaged inputs: a clear
 * message with the file and byte offset, and no OUT, not even half of one.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "core/json.h"
#include "test.h"
#include "test_trace_util.h"
#include "trace/source.h"
#include "../lib/trace_check.h"

/* A whole file (plain or gzip) as text. */
static bool read_text(const char *path, struct buf *out)
{
	char eb[256];
	struct trace_source *s = trace_source_open(path, false, eb, sizeof eb);
	if (!s)
		return false;
	char tmp[65536];
	ssize_t n;
	const char *e;
	while ((n = trace_source_read(s, tmp, sizeof tmp, &e)) > 0)
		buf_append(out, tmp, (size_t)n);
	trace_source_close(s);
	return n == 0;
}

static int run_stitch(const char *const *args, size_t n)
{
	char *argv[32];
	argv[0] = (char *)"stitch";
	for (size_t i = 0; i < n && i < 30; i++)
		argv[i + 1] = (char *)args[i];
	return cmd_stitch((int)n + 1, argv);
}

/* ts text (up to 3 decimals) in ns, independently of stitch's arithmetic */
static bool ts_ns(const struct json_value *v, __int128 *out)
{
	if (!v || v->type != JV_NUMBER)
		return false;
	const char *s = v->u.num.raw;
	bool neg = *s == '-';
	s += neg;
	__int128 x = 0;
	for (; *s >= '0' && *s <= '9'; s++)
		x = x * 10 + (*s - '0');
	int f = 0;
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9' && f < 3; s++, f++)
			x = x * 10 + (*s - '0');
	for (; f < 3; f++)
		x *= 10;
	*out = neg ? -x : x;
	return *s == 0;
}

static const char *str_of(const struct json_value *obj, const char *key)
{
	const char *s;
	size_t n;
	return json_get_str(obj, key, &s, &n) ? s : NULL;
}

/* What one input has: its events and which pids lack metadata. */
struct in_facts {
	const struct json_value *events; /* the traceEvents array */
	size_t with_pid;
	size_t added; /* metadata events stitch must add for it */
};

static void input_facts(const struct json_value *root, struct in_facts *f)
{
	memset(f, 0, sizeof *f);
	f->events = json_get(root, "traceEvents");
	struct buf pids = BUF_INIT; /* "\n<pid text>\n" entries, flags after */
	char names[4096] = {0}, sorts[4096] = {0};
	size_t np = 0;
	const char *texts[4096];
	struct buf all = BUF_INIT;
	for (uint32_t i = 0; i < f->events->len; i++) {
		const struct json_value *e = &f->events->u.items[i];
		const struct json_value *pid = json_get(e, "pid");
		if (!pid)
			continue;
		f->with_pid++;
		buf_reset(&all);
		struct jw w;
		jw_init(&w, &all);
		jw_value(&w, pid);
		size_t k = 0;
		for (; k < np; k++)
			if (strcmp(texts[k], all.data) == 0)
				break;
		if (k == np && np < 4096)
			texts[np++] = xstrdup(all.data);
		const char *ph = str_of(e, "ph"), *name = str_of(e, "name");
		if (ph && strcmp(ph, "M") == 0 && name && k < 4096) {
			names[k] |= strcmp(name, "process_name") == 0;
			sorts[k] |= strcmp(name, "process_sort_index") == 0;
		}
	}
	for (size_t k = 0; k < np; k++) {
		f->added += !names[k] + !sorts[k];
		free((char *)texts[k]);
	}
	buf_free(&all);
	buf_free(&pids);
}

/* Stitch inputs into out and check it against them, element by element. */
static void check_stitched(const char *const *inputs, size_t n, const char *out, const char *offset,
			   const int64_t *extra_ns)
{
	const char *args[32];
	size_t na = 0;
	for (size_t i = 0; i < n; i++)
		args[na++] = inputs[i];
	if (offset) {
		args[na++] = "--offset";
		args[na++] = offset;
	}
	args[na++] = "-q";
	args[na++] = "-o";
	args[na++] = out;
	REQUIRE(run_stitch(args, na) == 0);

	struct buf ot = BUF_INIT;
	REQUIRE(read_text(out, &ot));
	struct json_doc od;
	struct json_error je;
	REQUIRE(json_parse(ot.data, ot.len, &od, &je));
	const struct json_value *oev = json_get(od.root, "traceEvents");
	const struct json_value *ins = json_get(json_get(od.root, "dynoStitch"), "inputs");
	/* a directory is several inputs */
	REQUIRE(oev && ins && ins->type == JV_ARRAY && ins->len >= n);
	n = ins->len;
	int64_t out_base = 0;
	json_get_i64(od.root, "baseTimeNanoseconds", &out_base);

	/* every input passes the nesting rules -> the output does */
	bool inputs_clean = true;
	size_t at = 0, total = 0, added = 0;
	for (size_t k = 0; k < n; k++) {
		const struct json_value *desc = &ins->u.items[k];
		const char *file = str_of(desc, "file"), *label = str_of(desc, "label");
		REQUIRE(file && label);
		struct buf why = BUF_INIT;
		inputs_clean &= trace_check_file(file, NULL, &why);
		buf_free(&why);
		struct buf it = BUF_INIT;
		REQUIRE(read_text(file, &it));
		struct json_doc idoc;
		REQUIRE(json_parse(it.data, it.len, &idoc, &je));
		struct in_facts f;
		input_facts(idoc.root, &f);
		int64_t events = -1, shift = -1, base = 0;
		json_get_i64(desc, "events", &events);
		json_get_i64(desc, "shift_ns", &shift);
		CHECK_INT(events, f.events->len);
		/* the shift is the base time's difference, plus --offset */
		json_get_i64(idoc.root, "baseTimeNanoseconds", &base);
		CHECK_INT(shift, base - out_base + (extra_ns ? extra_ns[k] : 0));
		/* out pid -> this input */
		const struct json_value *pids = json_get(desc, "pids");
		REQUIRE(pids && pids->type == JV_ARRAY);
		/* its events, in order, at [at, at + len) */
		REQUIRE(at + f.events->len <= oev->len);
		for (uint32_t i = 0; i < f.events->len; i++) {
			const struct json_value *a = &f.events->u.items[i], *b = &oev->u.items[at + i];
			if (a->type != JV_OBJECT) {
				CHECK(b->type == a->type);
				continue;
			}
			REQUIRE(b->type == JV_OBJECT);
			CHECK_INT(b->len, a->len);
			const char *an = str_of(a, "name"), *bn = str_of(b, "name");
			CHECK((an == NULL) == (bn == NULL));
			if (an && bn)
				CHECK_STR(bn, an);
			__int128 ta, tb;
			if (ts_ns(json_get(a, "ts"), &ta)) {
				REQUIRE(ts_ns(json_get(b, "ts"), &tb));
				if (tb - ta != shift)
					test_fail(__FILE__, __LINE__, "%s event %u: ts moved by %lld ns, not %lld", file, i,
						  (long long)(tb - ta), (long long)shift);
			}
			const struct json_value *pa = json_get(a, "pid"), *pb = json_get(b, "pid");
			CHECK((pa == NULL) == (pb == NULL));
			if (pa && pb) {
				int64_t op;
				REQUIRE(json_value_i64(pb, &op));
				bool mine = false;
				for (uint32_t j = 0; j < pids->len; j++) {
					int64_t v;
					json_get_i64(&pids->u.items[j], "pid", &v);
					mine |= v == op;
				}
				CHECK(mine);
			}
			const char *ph = str_of(a, "ph");
			int64_t ida, idb;
			if (ph && (strcmp(ph, "s") == 0 || strcmp(ph, "f") == 0) && json_get_i64(a, "id", &ida)) {
				REQUIRE(json_get_i64(b, "id", &idb));
				CHECK_INT(idb, ida + ((int64_t)k << 40));
			}
		}
		at += f.events->len;
		total += f.events->len;
		added += f.added;
		json_doc_free(&idoc);
		buf_free(&it);
	}
	/* then only the metadata stitch added */
	CHECK_INT(oev->len, total + added);
	/* each out pid: one process_name (its input's label first), one
	 * process_sort_index */
	for (size_t k = 0; k < n; k++) {
		const struct json_value *desc = &ins->u.items[k], *pids = json_get(desc, "pids");
		const char *label = str_of(desc, "label");
		for (uint32_t j = 0; j < pids->len; j++) {
			int64_t pid;
			json_get_i64(&pids->u.items[j], "pid", &pid);
			int names = 0, sorts = 0;
			for (uint32_t i = 0; i < oev->len; i++) {
				const struct json_value *e = &oev->u.items[i];
				int64_t p;
				const char *ph = str_of(e, "ph"), *name = str_of(e, "name");
				if (!ph || strcmp(ph, "M") != 0 || !name || !json_get_i64(e, "pid", &p) || p != pid)
					continue;
				if (strcmp(name, "process_name") == 0) {
					names++;
					const char *pn = str_of(json_get(e, "args"), "name");
					CHECK(pn && strncmp(pn, label, strlen(label)) == 0);
				}
				sorts += strcmp(name, "process_sort_index") == 0;
			}
			CHECK_INT(names, 1);
			CHECK_INT(sorts, 1);
		}
	}
	struct buf why = BUF_INIT;
	struct trace_check_stats st;
	bool ok = trace_check_file(out, &st, &why);
	if (inputs_clean && !ok)
		test_fail(__FILE__, __LINE__, "%s: %s", out, why.data);
	CHECK(inputs_clean); /* the inputs chosen below all pass */
	CHECK_INT(st.events, oev->len);
	buf_free(&why);
	json_doc_free(&od);
	buf_free(&ot);
}

static void trace_path(char *out, size_t cap, const char *rel)
{
	snprintf(out, cap, "%s/traces/%s", test_data_dir(), rel);
}

/* A gpusnoop --trace timeline (docs/gpusnoop.md): counters of one pid,
 * wall-clock µs, no base time. */
static void write_gpusnoop(const char *path)
{
	FILE *f = fopen(path, "w");
	REQUIRE(f);
	fputs("{\"traceEvents\":[", f);
	for (int i = 0; i < 5; i++)
		fprintf(f, "%s{\"name\":\"gpusnoop outstanding bytes\",\"ph\":\"C\",\"pid\":4242,\"ts\":%lld,"
			   "\"args\":{\"memory\":%d,\"handles\":%d,\"mapped\":0}}",
			i ? "," : "", 1682725898236567LL + i * 1000, i * 4096, i);
	fputs("]}", f);
	fclose(f);
}

TEST(stitch_keeps_every_event)
{
	char a[600], b[600], c[600], d[600], snoop[600], out[600];
	trace_path(a, sizeof a, "trace_filter");
	trace_path(b, sizeof b, "cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");
	trace_path(c, sizeof c, "call_stack/backward_thread.json");
	trace_path(d, sizeof d, "amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz");
	snprintf(snoop, sizeof snoop, "%s/mem.json", test_tmpdir());
	write_gpusnoop(snoop);
	snprintf(out, sizeof out, "%s/stitched.json", test_tmpdir());
	/* wall-clock traces (base 0) and one with a base: every ts moves by
	 * that base on one clock; ns-resolution ts (19 digits) exactly */
	const char *in[] = {a, b, c, d, snoop};
	check_stitched(in, 5, out, NULL, NULL);
	/* the two ranks of trace_filter were two inputs: 6 */
}

TEST(stitch_aligns_on_base_time_and_offset)
{
	char a[600], b[600], c[600], out[600];
	trace_path(a, sizeof a, "nccl_parser_config/nccl_data.json.gz");
	trace_path(b, sizeof b, "cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");
	trace_path(c, sizeof c, "triton_example/triton_example.json.gz");
	snprintf(out, sizeof out, "%s/stitched.json.gz", test_tmpdir());
	const char *in[] = {a, b, c};
	/* all three have a base: the smallest is the output's */
	check_stitched(in, 3, out, NULL, NULL);
	unsigned char magic[2] = {0};
	FILE *f = fopen(out, "rb");
	REQUIRE(f);
	CHECK(fread(magic, 1, 2, f) == 2 && magic[0] == 0x1f && magic[1] == 0x8b);
	fclose(f);

	/* --offset moves one input more (by file name); inputs are sorted by
	 * rank: nccl_data (0), triton (no rank: last), rank-34 (34) */
	const char *args[] = {a, b, c, "-q", "--offset", "triton_example.json.gz=-2.5,nccl_data.json.gz=1000", "-o", out};
	REQUIRE(run_stitch(args, 8) == 0);
	struct buf t = BUF_INIT;
	REQUIRE(read_text(out, &t));
	struct json_doc doc;
	struct json_error je;
	REQUIRE(json_parse(t.data, t.len, &doc, &je));
	const struct json_value *ins = json_get(json_get(doc.root, "dynoStitch"), "inputs");
	REQUIRE(ins && ins->len == 3);
	int64_t s0, s1, s2;
	json_get_i64(&ins->u.items[0], "shift_ns", &s0);
	json_get_i64(&ins->u.items[1], "shift_ns", &s1);
	json_get_i64(&ins->u.items[2], "shift_ns", &s2);
	CHECK_STR(str_of(&ins->u.items[0], "label"), "rank 0 (nccl_data.json.gz)");
	CHECK_STR(str_of(&ins->u.items[2], "label"), "triton_example.json.gz");
	CHECK_INT(s0, 1000000);
	CHECK_INT(s1, (1719853884LL - 1711964646LL) * 1000000000LL);
	CHECK_INT(s2, (1727743122LL - 1711964646LL) * 1000000000LL - 2500);
	json_doc_free(&doc);
	buf_free(&t);
	/* the element-by-element check with those offsets (in output order) */
	int64_t extra[] = {1000000, 0, -2500};
	snprintf(out, sizeof out, "%s/stitched2.json", test_tmpdir());
	check_stitched(in, 3, out, "triton_example.json.gz=-2.5,nccl_data.json.gz=1000", extra);
}

/* No OUT and no temporary file left in its directory. */
static void check_nothing_written(const char *dir)
{
	DIR *d = opendir(dir);
	REQUIRE(d);
	struct dirent *de;
	while ((de = readdir(d)) != NULL)
		if (strncmp(de->d_name, "out", 3) == 0)
			test_fail(__FILE__, __LINE__, "%s/%s was left behind", dir, de->d_name);
	closedir(d);
}

TEST(stitch_bad_inputs)
{
	char good[600], bad[600], out[700], odir[600];
	trace_path(good, sizeof good, "call_stack/backward_thread.json");
	snprintf(odir, sizeof odir, "%s/o", test_tmpdir());
	mkdir(odir, 0755);
	snprintf(out, sizeof out, "%s/out.json", odir);
	snprintf(bad, sizeof bad, "%s/broken.json", test_tmpdir());
	struct buf t = BUF_INIT;
	REQUIRE(read_text(good, &t));

	/* cut in the middle of traceEvents */
	FILE *f = fopen(bad, "w");
	REQUIRE(f);
	fwrite(t.data, 1, t.len / 2, f);
	fclose(f);
	const char *args[] = {good, bad, "-q", "-o", out};
	CHECK_INT(run_stitch(args, 5), 1);
	char want[700];
	snprintf(want, sizeof want, "%s: byte ", bad);
	CHECK(strstr(test_stderr(), want) != NULL);
	check_nothing_written(odir);

	/* valid JSON but no trace */
	f = fopen(bad, "w");
	fputs("{\"events\":[]}", f);
	fclose(f);
	CHECK_INT(run_stitch(args, 5), 1);
	CHECK(strstr(test_stderr(), "no traceEvents array") != NULL);
	f = fopen(bad, "w");
	fputs("[1,2]", f);
	fclose(f);
	CHECK_INT(run_stitch(args, 5), 1);
	CHECK(strstr(test_stderr(), "byte 0") != NULL);
	check_nothing_written(odir);

	/* usage: no -o, an --offset naming no input, stdin */
	const char *noout[] = {good};
	CHECK_INT(run_stitch(noout, 1), 2);
	const char *off[] = {good, "--offset", "nosuch.json=5", "-o", out};
	CHECK_INT(run_stitch(off, 5), 2);
	CHECK(strstr(test_stderr(), "no input is 'nosuch.json'") != NULL);
	const char *off2[] = {good, "--offset", "backward_thread.json", "-o", out};
	CHECK_INT(run_stitch(off2, 5), 2);
	const char *dash[] = {"-", "-o", out};
	CHECK_INT(run_stitch(dash, 3), 2);
	/* a directory that cannot be written */
	const char *nodir[] = {good, "-q", "-o", "/nonexistent-dir/out.json"};
	CHECK_INT(run_stitch(nodir, 4), 1);
	CHECK(strstr(test_stderr(), "/nonexistent-dir/out.json.tmp") != NULL);
	check_nothing_written(odir);
	buf_free(&t);
}

/* OUT in the input directory (a second run): never read as an input. */
TEST(stitch_skips_its_own_output)
{
	char dir[600], out[700], src[600];
	snprintf(dir, sizeof dir, "%s/coll", test_tmpdir());
	mkdir(dir, 0755);
	trace_path(src, sizeof src, "call_stack/backward_thread.json");
	struct buf t = BUF_INIT;
	REQUIRE(read_text(src, &t));
	char in[700];
	snprintf(in, sizeof in, "%s/rank-0.json", dir);
	FILE *f = fopen(in, "w");
	fwrite(t.data, 1, t.len, f);
	fclose(f);
	snprintf(out, sizeof out, "%s/all.json", dir);
	const char *args[] = {dir, "-q", "-o", out};
	REQUIRE(run_stitch(args, 4) == 0);
	struct buf first = BUF_INIT, second = BUF_INIT;
	REQUIRE(read_text(out, &first));
	REQUIRE(run_stitch(args, 4) == 0);
	REQUIRE(read_text(out, &second));
	CHECK(first.len == second.len && memcmp(first.data, second.data, first.len) == 0);
	buf_free(&first);
	buf_free(&second);
	buf_free(&t);
}
