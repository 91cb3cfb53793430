#!/usr/bin/env bash
# test_output_devices.sh: output paths that are devices or FIFOs (/dev/null, /dev/stdout, a
# pipe) are written in place or refused, never replaced by a renamed temporary file.
. "$(dirname "$0")/../lib.sh"

AN=$BIN/agentxdp-analyze
trace=$TOP/samples/healthy/trace.pcapng
work=$(tmpdir)
trap 'rm -rf "$work"' EXIT
if ! need_root; then
	skip_or_fail_in_ci output-devices "mknod needs root"
	exit 0
fi
mknod "$work/null" c 1 3

# --prom and --json into a device: written in place, the node stays a device.
"$AN" "$trace" --prom "$work/null" >/dev/null 2>"$work/err"
rc=$?
if [ $rc -eq 0 ] && [ -c "$work/null" ]; then pass output-prom-to-device; else
	fail output-prom-to-device "exit $rc, $(ls -l "$work/null"), $(cat "$work/err")"
fi
# Like /dev/stdout, but a link of the test's own (a bug would replace only this one).
ln -s /proc/self/fd/1 "$work/stdout"
"$AN" "$trace" --prom "$work/stdout" 2>/dev/null | grep -q '^agentxdp_' &&
	pass output-prom-to-stdout || fail output-prom-to-stdout "no metric line on /dev/stdout"

# The database cannot live on a device: one line, non-zero exit, the node untouched.
"$AN" "$trace" -o "$work/null" >/dev/null 2>"$work/err"
rc=$?
if [ $rc -ne 0 ] && [ -c "$work/null" ] && [ "$(wc -l <"$work/err")" -eq 1 ] &&
	grep -q "not a regular file" "$work/err"; then
	pass output-db-to-device-refused
else
	fail output-db-to-device-refused "exit $rc, $(ls -l "$work/null"), $(tr '\n' '|' <"$work/err")"
fi

# A FIFO: the reader gets the exposition, the FIFO stays a FIFO.
mkfifo "$work/fifo"
timeout 20 cat "$work/fifo" >"$work/fifo-out" &
reader=$!
"$AN" "$trace" --prom "$work/fifo" >/dev/null 2>"$work/err"
rc=$?
wait $reader
if [ $rc -eq 0 ] && [ -p "$work/fifo" ] && grep -q '^agentxdp_' "$work/fifo-out"; then
	pass output-prom-to-fifo
else
	fail output-prom-to-fifo "exit $rc, $(ls -l "$work/fifo"), $(cat "$work/err")"
fi
[ "$T_FAILED" -eq 0 ]
