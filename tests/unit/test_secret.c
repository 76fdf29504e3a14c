/* test_secret.c - core/secret.c, the one reader of token files: the caller's
 * permission rule, the size bound, what is not a regular file (a FIFO must
 * not block), trailing whitespace, and the errno of a missing file. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/secret.h"
#include "test.h"

static void put(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

TEST(secret_read_strips_and_applies_the_callers_rules)
{
	char path[512], fifo[512];
	snprintf(path, sizeof path, "%s/tok", test_tmpdir());
	snprintf(fifo, sizeof fifo, "%s/fifo", test_tmpdir());
	struct secret s;

	put(path, "  sec ret\t \r\n\n", 0600);
	REQUIRE(secret_read(path, 0004, 4096, &s) == SECRET_OK);
	CHECK_INT((long)s.len, 9);
	CHECK_STR(s.data, "  sec ret"); /* leading whitespace is the token's */
	CHECK_INT((int)(s.mode & 0777), 0600);
	secret_free(&s);
	CHECK(s.data == NULL);

	put(path, "abcdefgh\n", 0644);
	CHECK(secret_read(path, 0004, 4096, &s) == SECRET_MODE);
	CHECK_INT((int)(s.mode & 0777), 0644);
	CHECK(secret_read(path, 0, 4096, &s) == SECRET_OK); /* dyno's rule */
	CHECK_STR(s.data, "abcdefgh");
	secret_free(&s);

	put(path, "0123456789", 0600);
	CHECK(secret_read(path, 0, 10, &s) == SECRET_OK);
	secret_free(&s);
	CHECK(secret_read(path, 0, 9, &s) == SECRET_TOO_BIG);
	CHECK(s.data == NULL);

	CHECK(secret_read(test_tmpdir(), 0, 4096, &s) == SECRET_NOT_REGULAR);
	REQUIRE(mkfifo(fifo, 0600) == 0);
	CHECK(secret_read(fifo, 0, 4096, &s) == SECRET_NOT_REGULAR); /* returns: no writer needed */

	unlink(path);
	CHECK(secret_read(path, 0, 4096, &s) == SECRET_OPEN);
	CHECK_INT(s.err, ENOENT);
}
