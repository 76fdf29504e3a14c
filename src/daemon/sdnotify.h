/*
 * sdnotify.h - readiness for systemd (Type=notify): READY=1, RELOADING=1,
 * STOPPING=1 through libsystemd's sd_notify(), loaded with core/dl.c only
 * when NOTIFY_SOCKET is set.  Without libsystemd nothing is sent (said
 * once).  Costs nothing when not under systemd: one getenv() per call.
 */
#ifndef DYNO_DAEMON_SDNOTIFY_H
#define DYNO_DAEMON_SDNOTIFY_H

void sdnotify(const char *state);

#endif
