/*
 * fuzz_ipc_datagram.c - libFuzzer target for the IPC fabric's datagram
 * decoder and what the endpoint does with a decoded message: register or
 * refresh in the registry (then expire), take and restore deliveries,
 * count ctxt pids.  The input is a sequence of datagrams, each prefixed by
 * one length byte, so the fuzzer can build multi-message conversations.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "daemon/ipc/ipc_wire.h"
#include "daemon/ipc/registry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	log_set_level(LOG_LEVEL_ERROR);
	struct registry reg;
	registry_init(&reg, 32);
	int64_t now = 1;
	struct ipc_msg m;
	const char *why;
	/* the whole input as one datagram */
	if (ipc_parse(data, size, &m, &why) && m.kind == IPC_REQ) {
		struct reg_delivery d;
		registry_poll(&reg, m.jobid, m.pids, (uint32_t)m.n, m.want, now, &d);
		registry_delivery_free(&d);
	}
	/* and as a conversation */
	size_t pos = 0;
	while (pos < size) {
		size_t n = data[pos++];
		if (n > size - pos)
			n = size - pos;
		/* copy so the sanitizer sees exact bounds */
		uint8_t *dg = malloc(n ? n : 1);
		memcpy(dg, data + pos, n);
		pos += n;
		now += 7000000000ll;
		if (ipc_parse(dg, n, &m, &why)) {
			if (m.kind == IPC_REQ) {
				struct reg_delivery d;
				if (registry_poll(&reg, m.jobid, m.pids, (uint32_t)m.n, m.want, now, &d) >= 0) {
					struct buf text = BUF_INIT;
					registry_delivery_text(&d, &text);
					buf_free(&text);
					if (m.want & 1)
						registry_restore(&reg, m.jobid, m.pids, (uint32_t)m.n, &d);
					else
						registry_delivery_free(&d);
				}
				char js[24];
				registry_job_str(m.jobid, js);
				struct reg_trigger t;
				registry_trigger(&reg, js, m.pids, (size_t)m.n, "A=1", 3, m.want & 3, m.n, now, &t);
				registry_trigger_free(&t);
			} else if (m.kind == IPC_CTXT) {
				registry_ctxt(&reg, m.jobid, m.gpu, m.pid);
			}
		}
		free(dg);
		registry_expire(&reg, now, 10);
	}
	registry_free(&reg);
	return 0;
}
