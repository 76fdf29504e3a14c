/* libs.c - see libs.h: the two libraries declared for core/dl.c. */
#include "libs.h"

#include "core/dl.h"

#define CS(field, name) DL_SYM(struct curl_api, field, name)
static const struct dl_sym curl_syms[] = {
	CS(global_init, "curl_global_init"),
	CS(easy_init, "curl_easy_init"),
	CS(easy_setopt, "curl_easy_setopt"),
	CS(easy_getinfo, "curl_easy_getinfo"),
	CS(easy_cleanup, "curl_easy_cleanup"),
	CS(easy_strerror, "curl_easy_strerror"),
	CS(multi_init, "curl_multi_init"),
	CS(multi_setopt, "curl_multi_setopt"),
	CS(multi_add_handle, "curl_multi_add_handle"),
	CS(multi_remove_handle, "curl_multi_remove_handle"),
	CS(multi_cleanup, "curl_multi_cleanup"),
	CS(multi_socket_action, "curl_multi_socket_action"),
	CS(multi_info_read, "curl_multi_info_read"),
	CS(multi_assign, "curl_multi_assign"),
	CS(slist_append, "curl_slist_append"),
	CS(slist_free_all, "curl_slist_free_all"),
};
#undef CS

#define MS(field, name) DL_SYM(struct mhd_api, field, name)
static const struct dl_sym mhd_syms[] = {
	MS(start_daemon, "MHD_start_daemon"),
	MS(stop_daemon, "MHD_stop_daemon"),
	MS(get_daemon_info, "MHD_get_daemon_info"),
	MS(run, "MHD_run"),
	MS(get_timeout, "MHD_get_timeout"),
	MS(create_response_from_buffer, "MHD_create_response_from_buffer"),
	MS(add_response_header, "MHD_add_response_header"),
	MS(queue_response, "MHD_queue_response"),
	MS(destroy_response, "MHD_destroy_response"),
	MS(add_connection, "MHD_add_connection"),
};
#undef MS

const struct curl_api *curl_api(struct buf *err)
{
	static struct curl_api api;
	static const char *const names[] = {"libcurl.so.4", NULL};
	static struct dl_lib lib = {"OTLP needs libcurl (Debian: apt install libcurl4)", names, curl_syms,
				    sizeof curl_syms / sizeof curl_syms[0], &api, NULL};
	static bool ready;
	if (ready)
		return &api;
	if (!dl_load(&lib, err))
		return NULL;
	if (api.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		buf_puts(err, "curl_global_init failed");
		return NULL;
	}
	ready = true;
	return &api;
}

const struct mhd_api *mhd_api(struct buf *err)
{
	static struct mhd_api api;
	static const char *const names[] = {"libmicrohttpd.so.12", NULL};
	static struct dl_lib lib = {"Prometheus needs libmicrohttpd (Debian: apt install libmicrohttpd12)", names,
				    mhd_syms, sizeof mhd_syms / sizeof mhd_syms[0], &api, NULL};
	return dl_load(&lib, err) ? &api : NULL;
}
