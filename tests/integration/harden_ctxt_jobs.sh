#!/usr/bin/env bash
# One local user's legacy `ctxt` datagrams cannot lock new jobs out (issue
# #35 item 1).  4,200 ctxt datagrams from one unprivileged uid, each for a
# made-up job id, used to fill the 4,096-entry job table until restart, so
# a new training job's `req` went unanswered.  Now a user creates at most a
# quarter of the job ids (REG_MAX_JOBS_PER_UID), and a job without
# processes expires --ipc_process_expiry_s after its last ctxt (1 s here).
source "$(dirname "$0")/tracing-lib.bash"
command -v setpriv >/dev/null || { echo "setpriv (util-linux) not installed"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "needs root to flood as another user"; exit 77; }
# --ipc_bpf_filter=off: the kernel's budget (200/s per user) would only
# pace this flood (4,200 datagrams fit in 21 s of it); what is tested is
# the daemon's own share, which holds for senders within the budget.
start_daemon --ipc_bpf_filter=off --ipc_process_expiry_s=1
setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$FAKE" --daemon_name="$IPCNAME" --flood=4200 --flood_ctxt --job_id=1000000 >"$WORK/flood.log" 2>&1 ||
	fail "flood: $(cat "$WORK/flood.log")"
# a new job of another user still registers at once
fake --run_s=30 --job_id=77
K=$LASTPID
wait_for bash -c "$RPC --port=$PORT --body='{\"fn\":\"getProcesses\"}' | grep -q '\"pid\":$K,'" ||
	fail "a new job's process could not register after the ctxt flood"
grep -q 'refused job .* per-user cap' "$WORK/daemon.log" || fail "the per-user job refusal was not logged"
# the flooder's jobs expire (they have no process): its share comes back
probe() {
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$FAKE" --daemon_name="$IPCNAME" --ctxt_gpu=0 --run_s=1 --job_id=5000000 >"$WORK/probe.log" 2>&1
	grep -q '^ctxt gpu 0: count 1$' "$WORK/probe.log"
}
sleep 2.5
wait_for probe || fail "the flooder's ctxt-only jobs did not expire: $(cat "$WORK/probe.log")"
stop_daemon
echo ok
