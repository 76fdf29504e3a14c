/*
 * test_rpc_net.c - core/net.h pieces the RPC server stands on: the frame
 * reader fed byte by byte and in one piece, its limits, allow-list parsing
 * and matching (IPv4, IPv6, v4-mapped), bind-address validation.
 */
#include <arpa/inet.h>
#include <string.h>
#include <unistd.h>

#include "core/net.h"
#include "daemon/rpc/security.h"
#include "test.h"

TEST(rpc_net_frame_feed_split_and_whole)
{
	struct buf in = BUF_INIT;
	net_frame_put(&in, "{\"fn\":\"getStatus\"}", 18);
	net_frame_put(&in, "TRAILING", 8);
	struct net_frame f;
	net_frame_init(&f, 1024);
	size_t used, pos = 0;
	enum net_frame_status st = NET_FRAME_MORE;
	while (st == NET_FRAME_MORE && pos < in.len) {
		st = net_frame_feed(&f, in.data + pos, 1, &used);
		pos += used;
	}
	CHECK_INT(st, NET_FRAME_DONE);
	CHECK_INT(pos, 22); /* never eats past the frame */
	CHECK_INT(f.body.len, 18);
	CHECK(memcmp(f.body.data, "{\"fn\":\"getStatus\"}", 18) == 0);
	net_frame_free(&f);
	net_frame_init(&f, 1024);
	CHECK_INT(net_frame_feed(&f, in.data, in.len, &used), NET_FRAME_DONE);
	CHECK_INT(used, 22);
	net_frame_free(&f);
	buf_free(&in);
}

TEST(rpc_net_frame_limits)
{
	struct net_frame f;
	size_t used;
	int32_t lens[] = {0, -1, (int32_t)0x80000000, 1025};
	int want[] = {NET_FRAME_BAD_LEN, NET_FRAME_BAD_LEN, NET_FRAME_BAD_LEN, NET_FRAME_TOO_BIG};
	for (int i = 0; i < 4; i++) {
		net_frame_init(&f, 1024);
		CHECK_INT(net_frame_feed(&f, &lens[i], 4, &used), want[i]);
		net_frame_free(&f);
	}
	net_frame_init(&f, 1024);
	int32_t ok = 1024;
	CHECK_INT(net_frame_feed(&f, &ok, 4, &used), NET_FRAME_MORE);
	net_frame_free(&f);
}

static bool allows(const struct net_acl *a, const char *ip)
{
	struct sockaddr_in s4 = {.sin_family = AF_INET};
	struct sockaddr_in6 s6 = {.sin6_family = AF_INET6};
	if (inet_pton(AF_INET, ip, &s4.sin_addr) == 1)
		return net_acl_allows(a, (struct sockaddr *)&s4, sizeof s4);
	if (inet_pton(AF_INET6, ip, &s6.sin6_addr) == 1)
		return net_acl_allows(a, (struct sockaddr *)&s6, sizeof s6);
	return false;
}

TEST(rpc_net_acl)
{
	struct net_acl a;
	struct buf err = BUF_INIT;
	REQUIRE(net_acl_parse(&a, "10.0.0.0/8, 192.168.1.7,fd00::/8,::1", &err));
	CHECK_INT(a.n, 4);
	CHECK(allows(&a, "10.255.1.2"));
	CHECK(!allows(&a, "11.0.0.1"));
	CHECK(allows(&a, "192.168.1.7"));
	CHECK(!allows(&a, "192.168.1.8"));
	CHECK(allows(&a, "::ffff:10.1.2.3")); /* v4-mapped */
	CHECK(allows(&a, "fd12::1"));
	CHECK(!allows(&a, "fe80::1"));
	CHECK(allows(&a, "::1"));
	CHECK(!allows(&a, "::2"));
	net_acl_free(&a);
	REQUIRE(net_acl_parse(&a, "10.1.2.0/23", &err));
	CHECK(allows(&a, "10.1.3.255"));
	CHECK(!allows(&a, "10.1.4.0"));
	net_acl_free(&a);
	REQUIRE(net_acl_parse(&a, "", &err));
	CHECK(allows(&a, "8.8.8.8")); /* empty: everyone */
	net_acl_free(&a);
	const char *bad[] = {"10.0.0.0/33", "nonsense", "10.0.0.0/", "1.2.3.4/x", "::1/129"};
	for (int i = 0; i < 5; i++) {
		buf_reset(&err);
		CHECK(!net_acl_parse(&a, bad[i], &err));
		CHECK(err.len > 0);
	}
	buf_free(&err);
}

TEST(rpc_net_listen_rejects_bad_bind_address)
{
	struct buf err = BUF_INIT;
	int port;
	CHECK(net_listen_tcp("not-an-address", 0, 8, &port, &err) < 0);
	CHECK(strstr(err.data, "not an IPv4 or IPv6 address") != NULL);
	int fd = net_listen_tcp("127.0.0.1", 0, 8, &port, &err);
	CHECK(fd >= 0 && port > 0);
	buf_reset(&err);
	int fd2 = net_listen_tcp("127.0.0.1", port, 8, NULL, &err); /* in use */
	CHECK(fd2 < 0);
	if (fd >= 0)
		close(fd);
	buf_free(&err);
}

TEST(rpc_log_text_from_clients_is_made_printable)
{
	char out[8];
	CHECK_STR(sec_printable("ab\ncd\x1b\xff", 7, out, sizeof out), "ab?cd??");
	CHECK_STR(sec_printable("0123456789", 10, out, sizeof out), "0123456");
}
