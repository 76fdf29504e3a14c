/*
 * test_json_scan.c - the 16-byte scans of core/scan.h (shared by the JSON
 * tokenizer and the trace loader's fast path) against byte-by-byte
 * definitions: every length up to 40 and every position of the byte that
 * stops the scan, for each kind of stopping byte, and the short-string
 * probe's contract (a length only when the string closes within 16 bytes
 * with nothing special before the quote).
 */
#include <string.h>

#include "core/scan.h"
#include "test.h"

static const char *ref_ws(const char *s, const char *e)
{
	while (s < e && (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t'))
		s++;
	return s;
}

static const char *ref_str(const char *s, const char *e)
{
	while (s < e) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80)
			break;
		s++;
	}
	return s;
}

TEST(json_scan_ws_and_str)
{
	static const char stop_ws[] = {'x', '"', '{', 0x0b, 0x00, (char)0x80, (char)0xff, '\f'};
	static const char stop_str[] = {'"', '\\', '\n', 0x01, 0x1f, (char)0x80, (char)0xc3, (char)0xff};
	static const char fill_ws[] = {' ', '\n', '\r', '\t'};
	char buf[64];
	int bad = 0;
	for (size_t len = 0; len <= 40; len++)
		for (size_t at = 0; at <= len; at++) {
			/* at == len: no stopping byte inside [buf, buf + len) */
			for (size_t k = 0; k < sizeof stop_ws; k++) {
				for (size_t i = 0; i < sizeof buf; i++)
					buf[i] = fill_ws[(i * 7 + len) % 4];
				if (at < len)
					buf[at] = stop_ws[k];
				if (scan_ws(buf, buf + len) != ref_ws(buf, buf + len) && bad++ < 5)
					test_fail(__FILE__, __LINE__, "scan_ws len %zu stop %zu byte %d", len, at, stop_ws[k]);
			}
			for (size_t k = 0; k < sizeof stop_str; k++) {
				for (size_t i = 0; i < sizeof buf; i++)
					buf[i] = (char)('a' + (i + len) % 26);
				if (at < len)
					buf[at] = stop_str[k];
				if (scan_str(buf, buf + len) != ref_str(buf, buf + len) && bad++ < 5)
					test_fail(__FILE__, __LINE__, "scan_str len %zu stop %zu byte %d", len, at, stop_str[k]);
			}
		}
	CHECK_INT(bad, 0);
}

TEST(json_scan_short_string)
{
	char buf[64];
	/* "abc" with room behind it: settled by the probe where there is one */
	memset(buf, 'z', sizeof buf);
	memcpy(buf, "\"abc\"", 5);
	int k = scan_short_str(buf, buf + sizeof buf);
	CHECK(k == 3 || (k == -1 && !DYNO_SSE2));
	/* whatever the probe says is what the full scan says */
	for (size_t q = 1; q < 40; q++)
		for (int special = 0; special < 3; special++) {
			memset(buf, 'a', sizeof buf);
			buf[0] = '"';
			buf[q] = '"';
			if (special && q > 2)
				buf[q / 2] = special == 1 ? '\\' : (char)0xc3;
			k = scan_short_str(buf, buf + sizeof buf);
			const char *end = ref_str(buf + 1, buf + sizeof buf);
			bool plain_close = *end == '"' && end - (buf + 1) < 16;
			if (k >= 0) {
				CHECK(plain_close);
				CHECK(buf + 1 + k == end);
			} else if (DYNO_SSE2) {
				CHECK(!plain_close);
			}
		}
	/* fewer than 17 bytes readable: never probed */
	memcpy(buf, "\"ab\"", 4);
	CHECK_INT(scan_short_str(buf, buf + 16), -1);
}
