#!/usr/bin/env bash
# Every malformed IPC datagram sent to the real daemon: no answer, no harm,
# counted; well-formed ones around them are answered.  Hex is little-endian
# as on the wire (wire-protocols.md 3.2, 3.6).
source "$(dirname "$0")/tracing-lib.bash"
start_daemon
hdr() { # hdr SIZE TYPE: 8-byte size + 32-byte NUL-padded type
	printf '%016x' "$1" | sed 's/\(..\)/\1 /g' | awk '{for(i=8;i>=1;i--) printf "%s",$i}'
	local t; t=$(printf '%s' "$2" | od -An -tx1 | tr -d ' \n')
	printf '%s' "$t"; printf '0%.0s' $(seq $((64 - ${#t})))
}
send() { "$FAKE" --daemon_name="$IPCNAME" --raw="$1"; }
good="$(hdr 20 req)02000000010000000000000000000000d2040000" # type 2, n 1, job 0, pid 1234
[ "$(send "$good")" = "reply 40 bytes" ] || fail "good req not answered"
declare -A bad=(
	[short]="$(hdr 20 req | cut -c1-60)"
	[size_mismatch]="$(hdr 24 req)02000000010000000000000000000000d2040000"
	[n_zero]="$(hdr 16 req)02000000000000000000000000000000"
	[n_negative]="$(hdr 16 req)02000000ffffffff0000000000000000"
	[n_65]="$(hdr 16 req)02000000410000000000000000000000"
	[n_vs_size]="$(hdr 20 req)02000000020000000000000000000000d2040000"
	[req_too_short]="$(hdr 4 req)02000000"
	[ctxt_size]="$(hdr 12 ctxt)000000000100000000000000"
	[type_no_nul]="1400000000000000$(printf '72%.0s' $(seq 32))02000000010000000000000000000000d2040000"
	[unknown_type]="$(hdr 4 hello)01020304"
)
for k in "${!bad[@]}"; do
	out=$(send "${bad[$k]}")
	[ "$out" = "no reply" ] || fail "$k: $out"
done
[ "$(send "$good")" = "reply 40 bytes" ] || fail "daemon stopped answering"
ctxt="$(hdr 16 ctxt)00000000d20400000000000000000000"
[ "$(send "$ctxt")" = "reply 44 bytes" ] || fail "ctxt not answered"
stop_daemon
grep -q 'IPC: 13 datagrams (2 req, 1 ctxt), 9 malformed, 1 unknown type, 0 foreign, 3 replies' "$WORK/daemon.log" ||
	fail "counters: $(grep 'IPC:' "$WORK/daemon.log")"
echo ok
