/*
 * test.h - the unit test harness.  TEST(name) { ... } registers a test at
 * start-up; tests/unit/main.c runs each in a forked child (a crash or a
 * sanitizer report fails that test only) and prints "N passed, N failed".
 * CHECK records a failure and goes on; REQUIRE ends the test.
 */
#ifndef DYNO_TEST_H
#define DYNO_TEST_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

void test_register(const char *name, void (*fn)(void));
void test_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void test_abort(void) __attribute__((noreturn));
/* tests/data (traces, conformance) relative to the repository root, or $DYNO_TESTDATA. */
const char *test_data_dir(void);
/* A fresh temporary directory for this test (removed by the runner). */
const char *test_tmpdir(void);
/* Everything this test wrote to stderr so far (the runner captures it and
 * shows it only when the test fails): for checking expected warnings.
 * Valid until the next call. */
const char *test_stderr(void);

#define TEST(name)                                                                                   \
	static void test_##name(void);                                                               \
	__attribute__((constructor)) static void register_##name(void)                              \
	{                                                                                            \
		test_register(#name, test_##name);                                                   \
	}                                                                                            \
	static void test_##name(void)

#define CHECK(c)                                                                                     \
	do {                                                                                         \
		if (!(c))                                                                            \
			test_fail(__FILE__, __LINE__, "CHECK(%s)", #c);                              \
	} while (0)
#define REQUIRE(c)                                                                                   \
	do {                                                                                         \
		if (!(c)) {                                                                          \
			test_fail(__FILE__, __LINE__, "REQUIRE(%s)", #c);                            \
			test_abort();                                                                \
		}                                                                                    \
	} while (0)
#define CHECK_INT(a, b)                                                                              \
	do {                                                                                         \
		long long a_ = (long long)(a), b_ = (long long)(b);                                  \
		if (a_ != b_)                                                                        \
			test_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, a_, b_);     \
	} while (0)
#define CHECK_STR(a, b)                                                                              \
	do {                                                                                         \
		const char *a_ = (a), *b_ = (b);                                                     \
		if (!a_ || !b_ || strcmp(a_, b_) != 0)                                               \
			test_fail(__FILE__, __LINE__, "%s == %s: \"%s\" != \"%s\"", #a, #b,          \
				  a_ ? a_ : "(null)", b_ ? b_ : "(null)");                           \
	} while (0)
#define CHECK_NEAR(a, b, rel)                                                                        \
	do {                                                                                         \
		double a_ = (a), b_ = (b), d_ = a_ - b_;                                             \
		if (d_ < 0)                                                                          \
			d_ = -d_;                                                                    \
		double m_ = (a_ < 0 ? -a_ : a_) > (b_ < 0 ? -b_ : b_) ? (a_ < 0 ? -a_ : a_)          \
								      : (b_ < 0 ? -b_ : b_); \
		if (d_ > (rel) * m_ && d_ > 1e-12)                                                   \
			test_fail(__FILE__, __LINE__, "%s ~= %s: %.17g != %.17g", #a, #b, a_, b_);   \
	} while (0)

#endif
