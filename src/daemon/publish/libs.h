/*
 * libs.h - libcurl and libmicrohttpd, loaded with dlopen() the first time
 * the OTLP or Prometheus sink is switched on.
 *
 * Linking them would map ~30 shared libraries (TLS stacks, Kerberos, LDAP)
 * into every daemon and cost ~6 MB of RSS even with both sinks off; the
 * default daemon (procfs collectors + JSON log) stays near 1 MB this way.
 * The headers still come from the -dev packages, so types, constants and
 * prototypes are checked at compile time: each pointer has the exact type
 * of the library function it stands for.
 */
#ifndef DYNO_PUBLISH_LIBS_H
#define DYNO_PUBLISH_LIBS_H

#define CURL_DISABLE_TYPECHECK /* we call through pointers, not the macros */
#include <curl/curl.h>
#include <microhttpd.h>

#include "core/buf.h"

struct curl_api {
	__typeof__(&curl_global_init) global_init;
	__typeof__(&curl_easy_init) easy_init;
	__typeof__(&curl_easy_setopt) easy_setopt;
	__typeof__(&curl_easy_getinfo) easy_getinfo;
	__typeof__(&curl_easy_cleanup) easy_cleanup;
	__typeof__(&curl_easy_strerror) easy_strerror;
	__typeof__(&curl_multi_init) multi_init;
	__typeof__(&curl_multi_setopt) multi_setopt;
	__typeof__(&curl_multi_add_handle) multi_add_handle;
	__typeof__(&curl_multi_remove_handle) multi_remove_handle;
	__typeof__(&curl_multi_cleanup) multi_cleanup;
	__typeof__(&curl_multi_socket_action) multi_socket_action;
	__typeof__(&curl_multi_info_read) multi_info_read;
	__typeof__(&curl_multi_assign) multi_assign;
	__typeof__(&curl_slist_append) slist_append;
	__typeof__(&curl_slist_free_all) slist_free_all;
};

struct mhd_api {
	__typeof__(&MHD_start_daemon) start_daemon;
	__typeof__(&MHD_stop_daemon) stop_daemon;
	__typeof__(&MHD_get_daemon_info) get_daemon_info;
	__typeof__(&MHD_run) run;
	__typeof__(&MHD_get_timeout) get_timeout;
	__typeof__(&MHD_create_response_from_buffer) create_response_from_buffer;
	__typeof__(&MHD_add_response_header) add_response_header;
	__typeof__(&MHD_queue_response) queue_response;
	__typeof__(&MHD_destroy_response) destroy_response;
	__typeof__(&MHD_add_connection) add_connection;
};

/* The loaded API, or NULL with the reason (which package to install) in err.
 * Loaded once per process and never unloaded. */
const struct curl_api *curl_api(struct buf *err);
const struct mhd_api *mhd_api(struct buf *err);

#endif
