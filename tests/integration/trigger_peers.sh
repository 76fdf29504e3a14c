#!/usr/bin/env bash
# A trigger with peers: daemon A fires (fireTrigger) and its peer, daemon B,
# gets the same on-demand request without A's loop blocking: B's
# registered fake Kineto process writes the trace, both configs carry one
# PROFILE_START_TIME (A's clock + --peers-delay-s), and A records what
# each peer answered; a peer nobody listens on is recorded as failed; a
# peer given as a host name is refused by the daemon (no DNS lookups on its
# loop) but resolved by dyno, which also takes a SLURM job's nodes and
# leaves the daemon itself out; a peer that requires a token gets the one
# of --trigger_peer_token_file.
source "$(dirname "$0")/tracing-lib.bash"
: "${DYNO:=$PWD/$BUILD/dyno}"
# daemon B: its own IPC name and log, one fake process of job 0
DLOG=$WORK/b.log IPCNAME=${IPCNAME}_b start_daemon
BPID=$DPID BPORT=$PORT
KIDS+=("$BPID")
IPCNAME=${IPCNAME}_b fake --run_s=60
FB=$LASTPID
wait_for has_procs 1 || fail "fake Kineto did not register with B"
# daemon A: no process of its own
start_daemon
# a port nothing listens on (B's, once B is stopped, would be racy): bind and close
DEAD=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
# the daemon takes numeric peers only (no DNS lookups on its loop) ...
rpc '{"fn":"addTrigger","trigger":{"id":"bad","config":"X=1","job":"0","peers":"localhost:1778"}}' >"$WORK/bad.out" 2>&1 || true
grep -q 'no DNS lookups' "$WORK/bad.out" || fail "peer refusal: $(cat "$WORK/bad.out")"
# ... so dyno resolves names (and SLURM jobs) itself, leaves out the daemon
# the trigger goes to, merges duplicates, and refuses a name that does not resolve
"$DYNO" trigger add named --port "$PORT" --job-id 0 --peers "localhost:$PORT,localhost:$BPORT,127.0.0.1:$BPORT" \
	--log-file "$WORK/n.json" >"$WORK/named.out" 2>&1 || fail "named peers: $(cat "$WORK/named.out")"
grep -q "peer localhost:$PORT is a daemon the trigger is added to: left out" "$WORK/named.out" ||
	fail "self not left out: $(cat "$WORK/named.out")"
def=$(rpc '{"fn":"listTriggers"}')
echo "$def" | grep -Eq "\"id\":\"named\"[^}]*\"peers\":\"(127\.0\.0\.1|\[::1\]):$BPORT\"" ||
	echo "$def" | grep -Eq "\"peers\":\"(127\.0\.0\.1|\[::1\]):$BPORT\"[^}]*\"id\":\"named\"" ||
	fail "named peers not sent as one address: $def"
if "$DYNO" trigger add bad2 --port "$PORT" --job-id 0 --peers no-such-host.invalid --log-file "$WORK/x.json" \
	>"$WORK/bad2.out" 2>&1; then
	fail "an unresolvable peer was accepted"
fi
grep -q 'peer no-such-host.invalid: cannot resolve' "$WORK/bad2.out" || fail "bad name: $(cat "$WORK/bad2.out")"
# a SLURM job's nodes (squeue/scontrol stand-ins on PATH): this host and
# B's; this host is the daemon itself at --port, B's port is --peers-port
mkdir -p "$WORK/slurm"
printf '#!/bin/sh\n[ "$3" = 4242 ] && echo "node[1-2]"\n' >"$WORK/slurm/squeue"
printf '#!/bin/sh\necho localhost; echo 127.0.0.1\n' >"$WORK/slurm/scontrol"
chmod +x "$WORK/slurm/squeue" "$WORK/slurm/scontrol"
PATH="$WORK/slurm:$PATH" "$DYNO" trigger add job --port "$PORT" --job-id 0 --peers-slurm-job 4242 \
	--peers-port "$BPORT" --log-file "$WORK/j.json" >"$WORK/job.out" 2>&1 || fail "slurm peers: $(cat "$WORK/job.out")"
rpc '{"fn":"listTriggers"}' | grep -Eq "\"peers\":\"(127\.0\.0\.1|\[::1\]):$BPORT\"" ||
	fail "slurm peers: $(rpc '{"fn":"listTriggers"}')"
PATH="$WORK/slurm:$PATH" "$DYNO" trigger add self --port "$PORT" --job-id 0 --peers-slurm-job 4242 \
	--peers-port "$PORT" --log-file "$WORK/s.json" >"$WORK/self.out" 2>&1 && fail "a job of only this daemon was accepted"
grep -q 'no peers left' "$WORK/self.out" || fail "self-only job: $(cat "$WORK/self.out")"
for id in named job; do "$DYNO" trigger rm $id --port "$PORT" >/dev/null || fail "rm $id"; done
"$DYNO" trigger add sync --port "$PORT" --job-id 0 --peers "127.0.0.1:$BPORT,127.0.0.1:$DEAD" --peers-delay-s 7 \
	--log-file "$WORK/sync_{fire}.json" --duration-ms 50 --min-interval-s 0 >"$WORK/add.out" ||
	fail "add: $(cat "$WORK/add.out")"
"$DYNO" trigger fire sync --port "$PORT" >"$WORK/fire.out" || fail "fire: $(cat "$WORK/fire.out")"
grep -q '"matched":0' "$WORK/fire.out" || fail "A has no process, yet: $(cat "$WORK/fire.out")"
start=$(grep -o '"profile_start_ms":[0-9]*' "$WORK/fire.out" | cut -d: -f2 || true)
[ -n "$start" ] || fail "no common start time: $(cat "$WORK/fire.out")"
# the peers' record comes when both have answered (the dead one at once)
for _ in $(seq 100); do rpc '{"fn":"listTriggers"}' | grep -q '"peers":\[' && break; sleep 0.05; done
rec=$(rpc '{"fn":"listTriggers"}')
echo "$rec" | grep -q "{\"busy\":0,\"matched\":1,\"triggered\":\[$FB\],\"peer\":\"127.0.0.1:$BPORT\"}" ||
	fail "peer B's answer not recorded: $rec"
echo "$rec" | grep -q "{\"error\":\"[^\"]*refused[^\"]*\",\"peer\":\"127.0.0.1:$DEAD\"}" || fail "dead peer: $rec"
echo "$rec" | grep -q '"why":"the peers of firing 0"' || fail "peers record: $rec"
# B's process traced, from the same start time
for _ in $(seq 300); do [ -s "$WORK/sync_0_$FB.json" ] && break; sleep 0.1; done
[ -s "$WORK/sync_0_$FB.json" ] || fail "no trace on the peer: $(ls "$WORK"; cat "$WORK/fake_b.log")"
# (its first event at baseTimeNanoseconds + ts, as Kineto writes them;
# through a double: compare in ms)
first=$(python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))
print(round(t["baseTimeNanoseconds"] / 1e6 + min(e["ts"] for e in t["traceEvents"] if "ts" in e) / 1e3))' \
	"$WORK/sync_0_$FB.json" || true)
[ -n "$first" ] && [ "$first" = "$start" ] || fail "the peer's trace starts at ${first}ms, not at the common start ${start}ms"
# a peer that requires a token (--rpc_token_file): A, which sends none, is
# refused; A2, started with --trigger_peer_token_file, is answered
printf 'correct-horse-battery\n' >"$WORK/token"
chmod 600 "$WORK/token"
APID=$DPID APORT=$PORT
KIDS+=("$APID")
DLOG=$WORK/c.log IPCNAME=${IPCNAME}_c start_daemon --rpc_token_file="$WORK/token"
KIDS+=("$DPID")
CPORT=$PORT
PORT=$APORT
# fire_tok WHO FIRING: trigger "tok" on the daemon at $PORT, peer C, and wait
# for the record of its FIRING-th firing's peers
fire_tok() {
	"$DYNO" trigger add tok --port "$PORT" --job-id 0 --peers "127.0.0.1:$CPORT" --log-file "$WORK/t.json" \
		--min-interval-s 0 >/dev/null || fail "add tok on $1"
	"$DYNO" trigger fire tok --port "$PORT" >/dev/null || fail "fire tok on $1"
	for _ in $(seq 100); do
		rpc '{"fn":"listTriggers"}' | grep -q "\"why\":\"the peers of firing $2\"" && break
		sleep 0.05
	done
}
fire_tok A 1
rpc '{"fn":"listTriggers"}' | grep -q "{\"error\":\"unauthorized: [^}]*\"peer\":\"127.0.0.1:$CPORT\"}" ||
	fail "a peer with a token answered a request without one: $(rpc '{"fn":"listTriggers"}')"
DLOG=$WORK/a2.log IPCNAME=${IPCNAME}_a2 start_daemon --trigger_peer_token_file="$WORK/token"
KIDS+=("$DPID")
fire_tok A2 0
rpc '{"fn":"listTriggers"}' | grep -q "{\"busy\":0,\"matched\":0,\"triggered\":\[\],\"peer\":\"127.0.0.1:$CPORT\"}" ||
	fail "the token did not reach the peer: $(rpc '{"fn":"listTriggers"}')"
# a token file the daemon cannot use stops it at start, with the reason
chmod 644 "$WORK/token"
if timeout 20 "$DYNOLOG" --port=0 --use_JSON=false --trigger_peer_token_file="$WORK/token" >"$WORK/bad_tok.log" 2>&1; then
	fail "a readable token file was accepted"
fi
grep -q 'trigger_peer_token_file' "$WORK/bad_tok.log" || fail "token refusal: $(cat "$WORK/bad_tok.log")"
stop_daemon
DPID=$APID
stop_daemon
echo ok
