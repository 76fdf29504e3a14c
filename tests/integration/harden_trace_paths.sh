#!/usr/bin/env bash
# --trace_path_prefixes resolves symlinks: a path under an allowed prefix
# that goes through a symlink leading out of it is refused (and the answer
# says where it leads); a prefix that is itself a symlink still allows its
# target's files; paths whose tail does not exist yet are allowed.  An
# explicitly empty --rpc_allow, --trace_path_prefixes or --rpc_token_file
# (which used to turn the protection off silently) stops the daemon.
source "$(dirname "$0")/tracing-lib.bash"
mkdir -p "$WORK/ok" "$WORK/outside"
ln -s /etc "$WORK/ok/link"
ln -s "$WORK/outside" "$WORK/ok/out"
ln -s "$WORK/ok" "$WORK/alias"
start_daemon --trace_path_prefixes="$WORK/alias"
req() { rpc "{\"fn\":\"setKinetOnDemandRequest\",\"config\":\"ACTIVITIES_LOG_FILE=$1\",\"pids\":[0]}"; }
r=$(req "$WORK/ok/link/passwd")
echo "$r" | grep -q "\"error\":\"trace path '$WORK/ok/link/passwd' resolves to '/etc/passwd', outside the allowed prefixes" ||
	fail "symlink to /etc: $r"
r=$(req "$WORK/alias/out/new/x.json")
echo "$r" | grep -q "resolves to '$WORK/outside/new/x.json', outside" || fail "symlink out, missing tail: $r"
for ok in "$WORK/alias/x.json" "$WORK/ok/x.json" "$WORK/ok/new/dir/x.json"; do
	r=$(req "$ok")
	echo "$r" | grep -q '"processesMatched":\[\]' || fail "$ok refused: $r"
done
stop_daemon
grep -q "on-demand request refused: trace path '$WORK/ok/link/passwd' resolves to '/etc/passwd'" "$WORK/daemon.log" ||
	fail "refusal not logged"

for flags in "--rpc_allow=" "--trace_path_prefixes=,," "--trace_path_prefixes=" "--rpc_token_file=" "--rpc_allow=, ,"; do
	rc=0
	timeout -s KILL 5 "$DYNOLOG" --port=0 --use_JSON=false "$flags" 2>"$WORK/err.log" || rc=$?
	# a configuration error: exit 2 (docs/daemon.md)
	[ "$rc" = 2 ] || fail "$flags: exit $rc: $(cat "$WORK/err.log")"
	grep -q 'empty' "$WORK/err.log" || fail "$flags: message: $(cat "$WORK/err.log")"
done
echo ok
