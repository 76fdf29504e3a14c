# Headless Chromium (Debian's, installed by scripts/install-deps.sh) for the
# tests that load a page in a real browser (report_chromium.sh,
# warehouse.sh).  The caller sets tmp (a scratch directory).
#
# chrome OUT_PREFIX ARGS...: one headless run with the network and
# background services off (without those flags it waits for the network on
# a closed machine); its stderr (the console log) goes to $tmp/OUT_PREFIX.log.
# chrome_probe: 0 when Chromium can render here, else 1 with the reason on
# stdout.  chrome_console PREFIX: the log's console lines (status 0 when
# there are any).

chrome() {
	local p=$1; shift
	timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--disable-dev-shm-usage --user-data-dir="$tmp/profile-$p" --enable-logging=stderr --v=0 "$@" \
		2>"$tmp/$p.log"
}

chrome_probe() {
	command -v chromium >/dev/null || { echo "chromium is not installed (scripts/install-deps.sh installs it)"; return 1; }
	chrome probe --dump-dom "data:text/html,<p>probe</p>" >"$tmp/probe.html"
	grep -q probe "$tmp/probe.html" || { echo "chromium cannot run here: $(tail -n 3 "$tmp/probe.log")"; return 1; }
}

chrome_console() {
	grep -E 'CONSOLE|Uncaught|Refused to|net::ERR' "$tmp/$1.log"
}
