#!/usr/bin/env bash
# bench-loadgen: threadlab's load generator against wrk and a net/http
# client, side by side in one run (issue 3's acceptance test).
#
# A fast epoll server (measure/load/internal/benchserver) is pinned to CPU 1;
# each client in turn is pinned to CPU 0 and drives it with the same number
# of keep-alive connections for the same time. Printed per client: requests
# per second, CPU seconds used (user+sys, from bash's `time`) and requests
# per CPU-second; then the ratios ours/wrk and ours/net-http. When the
# server, not the client, is the limit, requests/s tie and requests per
# CPU-second is the number that tells the clients apart.
#
# Knobs (environment): DURATION (10s), CONNS (50), ROUNDS (3; the median
# of the rounds is reported, clients take turns within each round, which
# spreads the noise of a shared machine evenly over them),
# THREADLAB (a prebuilt threadlab binary instead of building ./cmd/threadlab).
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-10s}
CONNS=${CONNS:-50}
ROUNDS=${ROUNDS:-3}

if ! command -v wrk >/dev/null; then
	echo "bench-loadgen: installing wrk (apt-get install -y wrk)" >&2
	apt-get install -y wrk >/dev/null || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; } || {
		echo "bench-loadgen: could not install wrk; install it by hand (apt-get install wrk)" >&2
		exit 1
	}
fi
command -v taskset >/dev/null || { echo "bench-loadgen: taskset is missing (apt-get install util-linux)" >&2; exit 1; }
command -v jq >/dev/null || { echo "bench-loadgen: jq is missing (apt-get install jq)" >&2; exit 1; }

SERVER_CPU=1 CLIENT_CPU=0
if [ "$(nproc)" -lt 2 ]; then
	echo "bench-loadgen: only $(nproc) CPU: server and clients share CPU 0, so the numbers mean less" >&2
	SERVER_CPU=0
fi

tmp=$(mktemp -d)
server_pid=
cleanup() {
	[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

if [ -n "${THREADLAB:-}" ]; then
	cp "$THREADLAB" "$tmp/threadlab"
else
	go build -o "$tmp/threadlab" ./cmd/threadlab
fi
go build -o "$tmp/benchserver" ./measure/load/internal/benchserver
go build -o "$tmp/nethttpbaseline" ./measure/load/internal/nethttpbaseline

taskset -c "$SERVER_CPU" "$tmp/benchserver" -addr 127.0.0.1:0 >"$tmp/server.out" &
server_pid=$!
for _ in $(seq 50); do
	grep -q "listening on" "$tmp/server.out" 2>/dev/null && break
	sleep 0.1
done
addr=$(sed -n 's/^listening on //p' "$tmp/server.out")
[ -n "$addr" ] || { echo "bench-loadgen: the bench server did not start" >&2; exit 1; }
url="http://$addr/"

# timed CMD...: runs CMD pinned to the client CPU; stdout to $tmp/out,
# CPU seconds (user+sys) to $tmp/cpu.
timed() {
	local TIMEFORMAT='%U %S'
	{ time taskset -c "$CLIENT_CPU" "$@" >"$tmp/out" 2>"$tmp/err"; } 2>"$tmp/time"
	awk '{printf "%.3f\n", $1 + $2}' "$tmp/time" >"$tmp/cpu"
}

ours() {
	timed "$tmp/threadlab" load --url "$url" --users "$CONNS" --duration "$DURATION" --json
	jq -r '"\(.rps) \(.requests) \(.errors)"' "$tmp/out"
}
wrk_() {
	timed wrk -t1 -c"$CONNS" -d"$DURATION" "$url"
	local rps req errs
	rps=$(awk '/^Requests\/sec:/ {print $2}' "$tmp/out")
	req=$(awk '/requests in/ {print $1}' "$tmp/out")
	# "Socket errors: connect 0, read 0, write 0, timeout 0" and "Non-2xx or 3xx responses: N"
	errs=$(awk -F'[ ,:]+' '/Socket errors/ {n += $5 + $7 + $9 + $11} /Non-2xx/ {n += $NF} END {print n+0}' "$tmp/out")
	echo "$rps $req $errs"
}
nethttp() {
	timed "$tmp/nethttpbaseline" -url "$url" -c "$CONNS" -d "$DURATION"
	jq -r '"\(.rps) \(.requests) \(.errors)"' "$tmp/out"
}

echo "bench-loadgen: server $addr on CPU $SERVER_CPU; clients on CPU $CLIENT_CPU; $CONNS keep-alive connections, $DURATION each, $ROUNDS round(s)"
# A short warm-up so the first client does not pay for cold caches.
taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNS" -d1s "$url" >/dev/null

declare -A rps cpu perCPU
tools=(ours wrk nethttp)
for round in $(seq "$ROUNDS"); do
	# Rotate who goes first, so slow drifts of a shared machine hit all alike.
	for k in 0 1 2; do
		tool=${tools[$(((round - 1 + k) % 3))]}
		fn=$tool; [ "$tool" = wrk ] && fn=wrk_
		read -r r n e < <($fn)
		c=$(cat "$tmp/cpu")
		p=$(awk -v n="$n" -v c="$c" 'BEGIN {printf "%.0f", (c > 0 ? n / c : 0)}')
		printf '  round %d %-8s %10.0f req/s  %6.2f cpu-s  %8s req/cpu-s  %s errors\n' "$round" "$tool" "$r" "$c" "$p" "$e"
		rps[$tool]+="$r "; cpu[$tool]+="$c "; perCPU[$tool]+="$p "
	done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}'; }

echo
printf '%-10s %12s %14s\n' client "req/s" "req/cpu-s"
for tool in ours wrk nethttp; do
	printf '%-10s %12.0f %14.0f\n' "$tool" "$(echo "${rps[$tool]}" | median)" "$(echo "${perCPU[$tool]}" | median)"
done
o=$(echo "${rps[ours]}" | median) w=$(echo "${rps[wrk]}" | median) h=$(echo "${rps[nethttp]}" | median)
oc=$(echo "${perCPU[ours]}" | median) wc=$(echo "${perCPU[wrk]}" | median) hc=$(echo "${perCPU[nethttp]}" | median)
echo
echo "ours/wrk:      $(ratio "$o" "$w")x req/s, $(ratio "$oc" "$wc")x req/cpu-s   (goal >= 1.0)"
echo "ours/net-http: $(ratio "$o" "$h")x req/s, $(ratio "$oc" "$hc")x req/cpu-s   (goal >= 2.5)"
