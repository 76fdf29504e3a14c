/*
 * rpc-send.c - a tiny RPC client for tests and scripts: sends the bytes of
 * stdin (or of --body) as one upstream-framed request (int32 native length
 * + body) and writes the answer body, byte for byte, to stdout.
 *
 *   rpc-send --port P [--host H] [--body JSON] [--timeout_ms MS] [--raw]
 *
 * --raw sends stdin unchanged, without a length prefix, so tests can send
 * broken frames (negative or huge lengths, short bodies).  Exit status: 0
 * answered, 3 the server closed without answering, 1 error, 2 usage.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/args.h"
#include "core/buf.h"
#include "core/net.h"

int main(int argc, char **argv)
{
	const char *host = "localhost", *body = NULL;
	int64_t port = NET_RPC_PORT, timeout_ms = 5000;
	bool raw = false;
	const struct arg_opt opts[] = {
		{"host", 0, ARG_STRING, &host, "HOST", "daemon host", 0, 0, NULL},
		{"port", 'p', ARG_INT, &port, "PORT", "daemon RPC port", 1, 65535, NULL},
		{"body", 0, ARG_STRING, &body, "JSON", "request body (default: stdin)", 0, 0, NULL},
		{"timeout_ms", 0, ARG_INT, &timeout_ms, "MS", "give up after this long", 1, 600000, NULL},
		{"raw", 0, ARG_BOOL, &raw, NULL, "send stdin as-is, without a length prefix", 0, 0, NULL},
		{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL},
	};
	struct args a;
	const struct arg_cmd cmd = {
		.prog = "rpc-send",
		.usage = "rpc-send --port P [--body JSON]",
		.description = "Send one dyno RPC request, print the answer.",
		.opts = opts,
		.max_pos = ARGS_ANY, /* ignored, as they always were */
	};
	int rc = args_cmd(&cmd, argc, argv, &a);
	if (rc >= 0)
		return rc;
	struct buf req = BUF_INIT, resp = BUF_INIT, err = BUF_INIT;
	if (body)
		buf_puts(&req, body);
	else
		buf_read_fd(&req, STDIN_FILENO, SIZE_MAX);
	int fd = net_connect_tcp(host, (int)port, (int)timeout_ms, &err);
	int ret = 1;
	if (fd < 0) {
		fprintf(stderr, "rpc-send: %s\n", err.data);
		goto out;
	}
	if (raw) {
		/* Send the bytes, then wait for the server to answer or close. */
		if (write(fd, req.data, req.len) != (ssize_t)req.len) {
			fprintf(stderr, "rpc-send: write: %s\n", strerror(errno));
			close(fd);
			goto out;
		}
		shutdown(fd, SHUT_WR);
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, (int)timeout_ms) <= 0) {
			fprintf(stderr, "rpc-send: no answer and no close within %lld ms\n", (long long)timeout_ms);
			close(fd);
			ret = 4;
			goto out;
		}
		buf_read_fd(&resp, fd, SIZE_MAX);
		fwrite(resp.data, 1, resp.len, stdout);
		ret = resp.len ? 0 : 3;
		close(fd);
		goto out;
	}
	rc = net_rpc_call(fd, req.data, req.len, &resp, 64u << 20, (int)timeout_ms, &err);
	close(fd);
	if (rc == 0) {
		fwrite(resp.data, 1, resp.len, stdout);
		ret = 0;
	} else if (rc == 1) {
		fprintf(stderr, "rpc-send: the daemon closed the connection without answering\n");
		ret = 3;
	} else {
		fprintf(stderr, "rpc-send: %s\n", err.data);
	}
out:
	buf_free(&req);
	buf_free(&resp);
	buf_free(&err);
	args_free(&a);
	return ret;
}
