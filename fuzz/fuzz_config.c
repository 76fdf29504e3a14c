/*
 * fuzz_config.c - libFuzzer target for dynolog's JSON config file: the
 * text goes through the same conversion to flags, the shared args parser
 * and validation as `--config=FILE` and SIGHUP do, without applying it.
 */
#include <stdint.h>
#include <stdlib.h>

#include "core/log.h"
#include "daemon/telemetry.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	log_set_level(LOG_LEVEL_ERROR); /* unknown keys are warned about: keep the run quiet */
	struct buf err = BUF_INIT;
	telemetry_config_check((const char *)d, n, &err);
	buf_free(&err);
	return 0;
}
