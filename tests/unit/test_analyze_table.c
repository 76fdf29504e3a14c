/*
 * test_analyze_table.c - the result-table renderer: Python-repr float text
 * (what pandas writes into HTA's CSVs), CSV quoting, NaN as an empty field,
 * JSON output readable by the core parser, the terminal table's truncation.
 */
#include <math.h>
#include <string.h>

#include "analyze/table.h"
#include "core/json.h"
#include "test.h"

/* the text one of the formatters gives v (valid until the next call) */
static const char *text_of(void (*format)(struct buf *, double), double v)
{
	static struct buf b;
	buf_free(&b);
	buf_init(&b);
	format(&b, v);
	return b.data;
}

static const char *fmt(double v) { return text_of(atable_fmt_float, v); }
static const char *disp(double v) { return text_of(atable_fmt_display, v); }

TEST(analyze_float_text_is_python_repr)
{
	CHECK_STR(fmt(4), "4.0");
	CHECK_STR(fmt(-3), "-3.0");
	CHECK_STR(fmt(0.17), "0.17");
	CHECK_STR(fmt(0.1 + 0.2), "0.30000000000000004");
	CHECK_STR(fmt(19143.608027224123), "19143.608027224123");
	CHECK_STR(fmt(1e-5), "1e-05");
	CHECK_STR(fmt(0.0001), "0.0001");
	CHECK_STR(fmt(1.5e-7), "1.5e-07");
	CHECK_STR(fmt(1e16), "1e+16");
	CHECK_STR(fmt(1234567890123456.0), "1234567890123456.0");
	CHECK_STR(fmt(2.5e20), "2.5e+20");
	CHECK_STR(fmt(0.0), "0.0");
	CHECK_STR(fmt(NAN), "");
	CHECK_STR(fmt(INFINITY), "inf");
	CHECK_NEAR(atable_round(53.555, 2), 53.56, 1e-12);
	CHECK_NEAR(atable_round(0.125, 2), 0.12, 1e-12); /* half to even, like numpy */
}

TEST(analyze_table_display_text_is_rounded)
{
	CHECK_STR(disp(1.55078125), "1.55");
	CHECK_STR(disp(3475.046167285705), "3475.05");
	CHECK_STR(disp(-2859.208955223881), "-2859.21");
	CHECK_STR(disp(2.5), "2.5");   /* trailing zeros dropped */
	CHECK_STR(disp(16738), "16738.0"); /* whole numbers as in the CSV */
	CHECK_STR(disp(0.123456), "0.123");
	CHECK_STR(disp(0.012345), "0.0123");
	CHECK_STR(disp(0.9996), "1.0");
	CHECK_STR(disp(1e-5), "1e-05"); /* tiny: repr, never "0.0" */
	CHECK_STR(disp(2.5e20), "2.5e+20");
	CHECK_STR(disp(NAN), "");
}

/* The CSV of a table made in runs of rows (as `dyno analyze` makes the
 * CSV on stdout, on several threads) is the CSV made at once. */
TEST(analyze_table_csv_rows_in_pieces)
{
	static const char *const cols[] = {"name:s", "n:i", "v:f", NULL};
	struct atable *t = atable_new("demo", "Demo table", cols);
	struct buf whole = BUF_INIT, pieces = BUF_INIT;
	atable_render(t, AFMT_CSV, &whole);
	atable_render_csv_rows(t, 0, 2048, &pieces);
	CHECK_STR(pieces.data, "name,n,v\n"); /* no rows: the header */
	CHECK_STR(whole.data, pieces.data);
	char name[32];
	for (int i = 0; i < 5000; i++) {
		size_t r = atable_add_row(t);
		snprintf(name, sizeof name, i % 3 ? "k%d" : "k<%d, \"q\">", i);
		atable_set_s(t, r, 0, name);
		atable_set_i(t, r, 1, i - 2500);
		if (i % 7)
			atable_set_f(t, r, 2, i / 3.0);
	}
	buf_reset(&whole);
	atable_render(t, AFMT_CSV, &whole);
	CHECK(strncmp(whole.data, "name,n,v\n\"k<0, \"\"q\"\">\",-2500,\nk1,-2499,0.3333333333333333\n", 56) == 0);
	static const size_t run[] = {1, 7, 2048, 4999, 5000};
	for (size_t k = 0; k < sizeof run / sizeof *run; k++) {
		buf_reset(&pieces);
		for (size_t from = 0; from == 0 || from < 5000; from += run[k])
			atable_render_csv_rows(t, from, from + run[k], &pieces);
		CHECK_INT(pieces.len, whole.len);
		CHECK(memcmp(pieces.data, whole.data, whole.len) == 0);
	}
	buf_reset(&pieces);
	atable_render_csv_rows(t, 4999, SIZE_MAX, &pieces); /* past the end: to the end */
	CHECK_STR(pieces.data, "k4999,2499,1666.3333333333333\n");
	buf_free(&whole);
	buf_free(&pieces);
	atable_free(t);
}

TEST(analyze_table_csv_json_table)
{
	static const char *const cols[] = {"name:s", "n:i", "v:f", "w:f", NULL};
	struct atable *t = atable_new("demo", "Demo table", cols);
	atable_int_text(t, 3);
	size_t r = atable_add_row(t);
	atable_set_s(t, r, 0, "void f<a, b>(\"x\")");
	atable_set_i(t, r, 1, 7);
	atable_set_f(t, r, 2, 2.0 / 3);
	atable_set_f(t, r, 3, 4);
	r = atable_add_row(t);
	atable_set_s(t, r, 0, "plain");
	atable_set_i(t, r, 1, -1);
	atable_note(t, "a note");
	struct buf b = BUF_INIT;
	atable_render(t, AFMT_CSV, &b);
	CHECK_STR(b.data, "name,n,v,w\n\"void f<a, b>(\"\"x\"\")\",7,0.6666666666666666,4\nplain,-1,,\n");
	buf_reset(&b);
	atable_render(t, AFMT_JSON, &b);
	struct json_doc doc;
	struct json_error e;
	REQUIRE(json_parse(b.data, b.len, &doc, &e));
	const struct json_value *rows = json_get(doc.root, "rows");
	REQUIRE(rows && rows->len == 2);
	CHECK(json_get(&rows->u.items[1], "v")->type == JV_NULL);
	const char *s;
	size_t n;
	CHECK(json_get_str(&rows->u.items[0], "name", &s, &n) && strcmp(s, "void f<a, b>(\"x\")") == 0);
	json_doc_free(&doc);
	buf_reset(&b);
	atable_render(t, AFMT_TABLE, &b);
	CHECK(strncmp(b.data, "Demo table\n", 11) == 0);
	CHECK(strstr(b.data, "a note\n") != NULL);
	CHECK(strstr(b.data, "  -") != NULL); /* NaN shows as '-' */
	CHECK(strstr(b.data, " 0.667 ") != NULL); /* rounded for reading ... */
	CHECK(strstr(b.data, "0.6666") == NULL);  /* ... the CSV keeps every digit */
	buf_free(&b);
	atable_free(t);
}

/* Two long kernel names that differ only past the 60th character: the
 * terminal table must not print them the same (they used to be cut to one
 * identical "...~"); cut in the middle with '…' and lengthened until
 * distinct; t->wide (--wide) prints them whole.  CSV/JSON untouched. */
TEST(analyze_table_cut_names_stay_distinct)
{
	static const char *const cols[] = {"name:s", "n:i", NULL};
	static const char *const names[] = {
		"void at::native::vectorized_elementwise_kernel<4, at::native::AbsFunctor<float>, "
		"at::detail::Array<char*, 2> >(int, at::native::AbsFunctor<float>, at::detail::Array<char*, 2>)",
		"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
		"at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
		/* differs from the first only in the middle */
		"void at::native::vectorized_elementwise_kernel<4, at::native::AbsFunctor<doubl>, "
		"at::detail::Array<char*, 2> >(int, at::native::AbsFunctor<float>, at::detail::Array<char*, 2>)",
		"short",
	};
	struct atable *t = atable_new("k", "Kernels", cols);
	for (size_t i = 0; i < 4; i++) {
		size_t r = atable_add_row(t);
		atable_set_s(t, r, 0, names[i]);
		atable_set_i(t, r, 1, (int64_t)i);
	}
	struct buf b = BUF_INIT;
	atable_render(t, AFMT_TABLE, &b);
	/* the name cell of each row (up to the two spaces before n) */
	char cell[4][512];
	size_t nl = 0;
	char *save = NULL;
	for (char *line = strtok_r(b.data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (nl >= 2 && nl - 2 < 4) {
			char *end = line + strlen(line);
			while (end > line && end[-1] != ' ')
				end--; /* drop n */
			while (end > line && end[-1] == ' ')
				end--;
			snprintf(cell[nl - 2], sizeof cell[0], "%.*s", (int)(end - line), line);
		}
		nl++;
	}
	REQUIRE(nl == 6);
	for (size_t i = 0; i < 4; i++)
		for (size_t j = i + 1; j < 4; j++)
			CHECK(strcmp(cell[i], cell[j]) != 0);
	CHECK(strstr(cell[0], "\u2026") != NULL);          /* cut, and marked */
	CHECK(strstr(cell[0], "Array<char*, 2>)") != NULL); /* the tail is kept */
	CHECK_STR(cell[3], "short");
	buf_reset(&b);
	t->wide = true;
	atable_render(t, AFMT_TABLE, &b);
	for (size_t i = 0; i < 3; i++)
		CHECK(strstr(b.data, names[i]) != NULL);
	CHECK(strstr(b.data, "\u2026") == NULL);
	buf_reset(&b);
	t->wide = false;
	atable_render(t, AFMT_CSV, &b);
	CHECK(strstr(b.data, names[0]) != NULL && strstr(b.data, "\u2026") == NULL);
	buf_free(&b);
	atable_free(t);
}

/* JSON: one number type per column.  A float column printed 1 and 0.93
 * in one column; now every value of it is a float (1.0), and an int_text
 * column of whole values stays integers. */
TEST(analyze_json_one_number_type_per_column)
{
	static const char *const cols[] = {"f:f", "g:f", "i:i", NULL};
	struct atable *t = atable_new("j", "J", cols);
	atable_int_text(t, 1);
	double f[] = {1, 0.93, 1e20}, g[] = {4, 5, NAN};
	for (size_t k = 0; k < 3; k++) {
		size_t r = atable_add_row(t);
		atable_set_f(t, r, 0, f[k]);
		atable_set_f(t, r, 1, g[k]);
		atable_set_i(t, r, 2, (int64_t)k);
	}
	struct buf b = BUF_INIT;
	atable_render(t, AFMT_JSON, &b);
	CHECK(strstr(b.data, "{\"f\":1.0,\"g\":4,\"i\":0}") != NULL);
	CHECK(strstr(b.data, "{\"f\":0.93,\"g\":5,\"i\":1}") != NULL);
	CHECK(strstr(b.data, "{\"f\":1e+20,\"g\":null,\"i\":2}") != NULL || strstr(b.data, "{\"f\":1e20,") != NULL);
	struct json_doc doc;
	struct json_error e;
	CHECK(json_parse(b.data, b.len, &doc, &e));
	json_doc_free(&doc);
	/* a non-whole value in the int_text column: all its values floats */
	atable_set_f(t, 1, 1, 5.5);
	buf_reset(&b);
	atable_render(t, AFMT_JSON, &b);
	CHECK(strstr(b.data, "\"g\":4.0,") != NULL && strstr(b.data, "\"g\":5.5,") != NULL);
	buf_free(&b);
	atable_free(t);
}
