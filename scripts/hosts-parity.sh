#!/usr/bin/env bash
# hosts-parity: does a multi-host run measure the target like a single-machine run? (issue 25)
#
#   scripts/hosts-parity.sh [--compare] [MANIFEST] [PROFILE]     default: scripts/hosts-parity.yaml, no profile
#
# Runs MANIFEST twice with bin/threadlab, once on this machine and once with `run --hosts` over
# network-namespace hosts (scripts/netns-hosts.sh: a target host and a load host), then prints
#   1. `threadlab diff` of the two runs (it names the host difference first), and
#   2. a parity table (cmd/hostsparity): per variant and metric, the ratio multi-host / single-machine of the
#      medians of fork medians, with the verdicts' 90% bootstrap interval of that ratio (forks are the unit of
#      replication), judged on the interval: "ok" when the whole interval lies inside [1-TOLERANCE, 1+TOLERANCE],
#      "not settled" when it straddles a bound (more forks may settle it), "outside" when it lies beyond one,
#      "missing" when a side has no trials of the variant. Judged: target_cpu_s (the target's CPU-seconds from the
#      load's release to its last answer), target_peak_rss_mb and target_peak_threads. Shown, not judged:
#      target_cpu_ms_per_req (CPU-seconds over the same requests) and target_cpu_pct (a mean of once-a-second
#      samples, which a sub-second burst moves from 40% to 163% of one core).
# The exit status is 0 when no judged figure is outside or missing (a "not settled" one is no failure: run more
# forks), 1 when one is or when no multi-host trial recorded per-host noise, 3 when this machine cannot fake hosts
# (netns-hosts.sh's reason on stderr).
#
# Network-namespace hosts share this machine's CPUs: run it on a quiet machine, since the noise gates of both
# runs read the same host. Environment:
#   PARITY_FORKS, PARITY_ITERATIONS  forks per variant and bursts per fork (default: the manifest's; 3 and 10 in
#                                    scripts/hosts-parity.yaml): both runs use a copy of MANIFEST with them set, in
#                                    PARITY_DIR. An interval over 3 forks is wide; 10 forks settle more.
#   PARITY_DIR        where the runs go (default a fresh temporary directory; the runs stay there)
#   TOLERANCE         the band in percent (default 10)
#   PARITY_TRIALS     which trials are compared: steady (default) reads each run as its verdicts do, each fork's
#                     steady iterations, and for the target's CPU those steady in the CPU's own series too (it keeps
#                     falling for bursts after the wall time has settled: METHODOLOGY "Per metric"); valid reads
#                     every valid measured iteration; all every trial, invalid ones too. The runs are kept, so
#                     PARITY_DIR=DIR PARITY_TRIALS=valid scripts/hosts-parity.sh --compare reads them again without running.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
compare_only=
if [ "${1:-}" = --compare ]; then
	compare_only=1
	shift
	[ -n "${PARITY_DIR:-}" ] || { echo "hosts-parity: --compare reads the runs of an earlier PARITY_DIR: set it" >&2; exit 2; }
fi
manifest=${1:-scripts/hosts-parity.yaml}
profile=${2:-}
tol=${TOLERANCE:-10}
dir=${PARITY_DIR:-$(mktemp -d /tmp/threadlab-parity.XXXXXX)}
mkdir -p "$dir"

[ -n "$compare_only" ] || make -s build >/dev/null
name=$(awk '/^name:/ {print $2; exit}' "$manifest")
[ -n "$name" ] || { echo "hosts-parity: $manifest has no name: line" >&2; exit 2; }
# setting KEY VALUE FILE: the top-level KEY of the manifest copy FILE set to VALUE (a whole number).
setting() {
	[[ "$2" =~ ^[1-9][0-9]*$ ]] || { echo "hosts-parity: PARITY_${1^^}=$2: want a whole number of ${1} (1 or more)" >&2; exit 2; }
	if grep -q "^$1:" "$3"; then
		sed -i "s/^$1:.*/$1: $2/" "$3"
	else
		echo "$1: $2" >>"$3"
	fi
}
if [ -z "$compare_only" ] && { [ -n "${PARITY_FORKS:-}" ] || [ -n "${PARITY_ITERATIONS:-}" ]; }; then
	cp "$manifest" "$dir/manifest.yaml"
	[ -z "${PARITY_FORKS:-}" ] || setting forks "$PARITY_FORKS" "$dir/manifest.yaml"
	[ -z "${PARITY_ITERATIONS:-}" ] || setting iterations "$PARITY_ITERATIONS" "$dir/manifest.yaml"
	manifest=$dir/manifest.yaml
	echo "hosts-parity: $manifest with forks ${PARITY_FORKS:-as written} and iterations ${PARITY_ITERATIONS:-as written}"
fi
args=(--quiet --data "$dir/data" --reports "$dir/reports")
[ -n "$profile" ] && args+=(--profile "$profile")

status=0
if [ -z "$compare_only" ]; then
	scripts/netns-hosts.sh up "$dir/hosts" target load1 || status=$?
	[ "$status" -eq 0 ] || exit "$status"
	trap 'scripts/netns-hosts.sh down "$dir/hosts" >/dev/null 2>&1 || true' EXIT

	echo "hosts-parity: single-machine run of $manifest into $dir/data/$name/single"
	bin/threadlab run "${args[@]}" --run-id single "$manifest"
	echo "hosts-parity: multi-host run (target, load1) into $dir/data/$name/hosts"
	bin/threadlab run "${args[@]}" --hosts "$dir/hosts/hosts.yaml" --run-id hosts "$manifest"

	echo
	echo "== threadlab diff single hosts"
	bin/threadlab diff "$dir/data/$name/single" "$dir/data/$name/hosts" || true
fi

hosts="$dir/data/$name/hosts/trials.csv"
echo
go build -o "$dir/hostsparity" ./cmd/hostsparity
judge=(--tolerance "$(awk -v t="$tol" 'BEGIN { printf "%g", t / 100 }')")
case "${PARITY_TRIALS:-steady}" in
steady) judge+=(--steady) ;;
valid) ;;
all) judge+=(--all) ;;
*) echo "hosts-parity: PARITY_TRIALS=${PARITY_TRIALS}: want steady, valid or all" >&2; exit 2 ;;
esac
"$dir/hostsparity" "${judge[@]}" "$dir/data/$name/single" "$dir/data/$name/hosts" || status=1
noise=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } $col["hosts_noise"] != "" { n++ } END { print n + 0 }' "$hosts")
echo "per-host noise (hosts_noise) recorded on $noise of $(($(wc -l <"$hosts") - 1)) multi-host trials"
[ "$noise" -gt 0 ] || status=1
echo "hosts-parity: runs kept in $dir/data/$name (single, hosts); status $status"
exit "$status"
