/* libs.c - see libs.h. */
#include "libs.h"

#include <dlfcn.h>

#define SYM(lib, api, field, name)                                                                   \
	do {                                                                                         \
		*(void **)&(api).field = dlsym((lib), name);                                          \
		if (!(api).field) {                                                                  \
			missing = name;                                                              \
			goto fail;                                                                   \
		}                                                                                    \
	} while (0)

const struct curl_api *curl_api(struct buf *err)
{
	static struct curl_api api;
	static int state; /* 0 untried, 1 loaded, -1 failed */
	const char *missing = NULL;
	if (state > 0)
		return &api;
	void *lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		buf_printf(err, "OTLP needs libcurl (Debian: apt install libcurl4): %s", dlerror());
		return NULL;
	}
	SYM(lib, api, global_init, "curl_global_init");
	SYM(lib, api, easy_init, "curl_easy_init");
	SYM(lib, api, easy_setopt, "curl_easy_setopt");
	SYM(lib, api, easy_getinfo, "curl_easy_getinfo");
	SYM(lib, api, easy_cleanup, "curl_easy_cleanup");
	SYM(lib, api, easy_strerror, "curl_easy_strerror");
	SYM(lib, api, multi_init, "curl_multi_init");
	SYM(lib, api, multi_setopt, "curl_multi_setopt");
	SYM(lib, api, multi_add_handle, "curl_multi_add_handle");
	SYM(lib, api, multi_remove_handle, "curl_multi_remove_handle");
	SYM(lib, api, multi_cleanup, "curl_multi_cleanup");
	SYM(lib, api, multi_socket_action, "curl_multi_socket_action");
	SYM(lib, api, multi_info_read, "curl_multi_info_read");
	SYM(lib, api, multi_assign, "curl_multi_assign");
	SYM(lib, api, slist_append, "curl_slist_append");
	SYM(lib, api, slist_free_all, "curl_slist_free_all");
	if (api.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		buf_puts(err, "curl_global_init failed");
		state = -1;
		return NULL;
	}
	state = 1;
	return &api;
fail:
	buf_printf(err, "libcurl.so.4 lacks %s (too old?)", missing);
	state = -1;
	return NULL;
}

const struct mhd_api *mhd_api(struct buf *err)
{
	static struct mhd_api api;
	static int state;
	const char *missing = NULL;
	if (state > 0)
		return &api;
	void *lib = dlopen("libmicrohttpd.so.12", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		buf_printf(err, "Prometheus needs libmicrohttpd (Debian: apt install libmicrohttpd12): %s", dlerror());
		return NULL;
	}
	SYM(lib, api, start_daemon, "MHD_start_daemon");
	SYM(lib, api, stop_daemon, "MHD_stop_daemon");
	SYM(lib, api, get_daemon_info, "MHD_get_daemon_info");
	SYM(lib, api, run, "MHD_run");
	SYM(lib, api, get_timeout, "MHD_get_timeout");
	SYM(lib, api, create_response_from_buffer, "MHD_create_response_from_buffer");
	SYM(lib, api, add_response_header, "MHD_add_response_header");
	SYM(lib, api, queue_response, "MHD_queue_response");
	SYM(lib, api, destroy_response, "MHD_destroy_response");
	state = 1;
	return &api;
fail:
	buf_printf(err, "libmicrohttpd.so.12 lacks %s (too old?)", missing);
	state = -1;
	return NULL;
}
