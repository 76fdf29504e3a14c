/* sdnotify.c - see sdnotify.h. */
#include "sdnotify.h"

#include <stdlib.h>

#include "core/dl.h"
#include "core/log.h"

struct sd_api {
	int (*notify)(int unset_environment, const char *state);
};

void sdnotify(const char *state)
{
	if (!getenv("NOTIFY_SOCKET"))
		return;
	static struct sd_api api;
	static const char *const names[] = {"libsystemd.so.0", NULL};
	static const struct dl_sym syms[] = {DL_SYM(struct sd_api, notify, "sd_notify")};
	static struct dl_lib lib = {"NOTIFY_SOCKET is set but sd_notify needs libsystemd", names, syms, 1, &api,
				    NULL};
	struct buf err = BUF_INIT;
	if (dl_load(&lib, &err))
		api.notify(0, state);
	else
		LOG_ONCE(LOG_LEVEL_INFO, "%s; not notifying systemd", err.data);
	buf_free(&err);
}
