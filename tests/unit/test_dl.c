/* test_dl.c - core/dl.c against real libraries: a symbol resolved and
 * called, a missing symbol and a missing library reported by name. */
#include <math.h>
#include <string.h>

#include "core/dl.h"
#include "test.h"

struct m_api {
	double (*cos)(double);
	double (*sqrt)(double);
};

struct bogus_api {
	double (*cos)(double);
	void (*nope)(void);
	void (*nope2)(void);
};

TEST(dl_resolves_real_symbols)
{
	static const char *const names[] = {"libdyno_no_such_library.so.9", "libm.so.6", NULL};
	static const struct dl_sym syms[] = {DL_SYM(struct m_api, cos, "cos"), DL_SYM(struct m_api, sqrt, "sqrt")};
	struct m_api api = {0};
	struct dl_lib lib = {"test needs libm", names, syms, 2, &api, NULL};
	struct buf err = BUF_INIT;
	REQUIRE(dl_load(&lib, &err)); /* the first soname is missing: the next one is tried */
	CHECK_STR(lib.loaded, "libm.so.6");
	CHECK(err.len == 0);
	REQUIRE(api.cos && api.sqrt);
	CHECK(api.cos(0.0) == 1.0);
	CHECK(api.sqrt(16.0) == 4.0);
	CHECK(dl_load(&lib, &err)); /* once loaded, at once */
	buf_free(&err);
}

TEST(dl_names_every_missing_symbol)
{
	static const char *const names[] = {"libm.so.6", NULL};
	static const struct dl_sym syms[] = {DL_SYM(struct bogus_api, cos, "cos"),
					     DL_SYM(struct bogus_api, nope, "dyno_no_such_function"),
					     DL_SYM(struct bogus_api, nope2, "dyno_no_such_function_either")};
	struct bogus_api api = {0};
	struct dl_lib lib = {"test needs libm", names, syms, 3, &api, NULL};
	struct buf err = BUF_INIT;
	CHECK(!dl_load(&lib, &err));
	CHECK(lib.loaded == NULL);
	CHECK(strstr(err.data, "libm.so.6 lacks dyno_no_such_function, dyno_no_such_function_either") != NULL);
	CHECK(strstr(err.data, "cos") == NULL);
	buf_free(&err);
}

TEST(dl_missing_library_says_which_package)
{
	static const char *const names[] = {"libdyno_no_such_library.so.9", NULL};
	static const struct dl_sym syms[] = {DL_SYM(struct m_api, cos, "cos")};
	struct m_api api = {0};
	struct dl_lib lib = {"X needs libnothing (Debian: apt install nothing)", names, syms, 1, &api, NULL};
	struct buf err = BUF_INIT;
	CHECK(!dl_load(&lib, &err));
	CHECK(strncmp(err.data, "X needs libnothing (Debian: apt install nothing): ", 50) == 0);
	CHECK(strstr(err.data, "libdyno_no_such_library.so.9") != NULL);
	CHECK(api.cos == NULL);
	buf_reset(&err);
	CHECK(!dl_load(&lib, &err)); /* looked for again, same answer */
	CHECK(strstr(err.data, "libdyno_no_such_library.so.9") != NULL);
	buf_free(&err);
}
