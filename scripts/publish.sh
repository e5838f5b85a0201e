#!/usr/bin/env bash
# publish: run default-profile experiments one after another for publication, from a committed tree, each only if
# its planned wall time fits before a deadline.
#
#   scripts/publish.sh [--until HH:MM] EXP [EXP ...]       (make publish EXPS="io-bound cpu-bound" UNTIL=04:10)
#   scripts/publish.sh [--until HH:MM]                     (make publish UNTIL=04:10)
#
# With no EXP, the experiments are those `threadlab status` says need a new run: no run yet, or a catalog manifest
# that has changed since the run its page shows (in catalog order; with --until, each that fits is run).
#
# What a published run needs and this checks, in order:
#   - a clean, committed tree: `git status --porcelain` empty (run.json records the commit; a "-dirty" version is
#     not publishable), and before each later experiment no change outside data/ and reports/ (what the runs
#     before it wrote);
#   - bin/threadlab built from that commit (rebuilt here);
#   - time: `threadlab run --dry-run` plans the experiment from the committed runs (pipeline/cost); an experiment
#     whose planned wall time plus 10% would end after --until (UTC) is skipped, and the next is tried;
#   - a quiet machine: nothing here can enforce that. Run nothing beside it (helpers, builds, tests, and not even a
#     `git worktree add`: on 2 cores that took 11-78% of one core for four bursts of blocking-in-webflux
#     20261205T064455Z): each trial's noise gate reads the host's CPU used outside threadlab, and a busy host
#     invalidates trials, which cost re-runs from the retry budget. Watch progress with tail, nothing heavier.
# Each run ends by itself; one that overruns its plan by more than half is interrupted (SIGINT: its finished trials
# stay on disk, and `threadlab run --resume` continues it). After the last run the whole site is re-rendered
# (`threadlab site`): a run renders its own pages before its finishing stage, and older runs' pages must point at it.
# Edit nothing under experiments/ until this returns: the re-render compares every run with today's manifests, and a
# changed claim there keeps older runs' pages from pointing at the new run (re-run `bin/threadlab site` if you did).
# The runs are left uncommitted for review: commit data/ and reports/ after reading them. Exit status: 0 when every
# experiment ran or was skipped for time, 1 when a run (or the re-render) failed, 2 on a usage error or a dirty tree.
set -euo pipefail
cd "$(dirname "$0")/.."

until_hm=
if [ "${1:-}" = --until ]; then
	until_hm=${2:-}
	shift 2 || true
	[[ "$until_hm" =~ ^([01][0-9]|2[0-3]):[0-5][0-9]$ ]] || { echo "publish: --until $until_hm: give a UTC time as HH:MM, e.g. 04:10" >&2; exit 2; }
fi
for e in "$@"; do
	[ -f "experiments/$e.yaml" ] || { echo "publish: no experiments/$e.yaml" >&2; exit 2; }
done

# clean [PATHSPEC...]: the tree (or what PATHSPEC names) has no uncommitted change.
clean() {
	if [ -n "$(git status --porcelain -- "$@")" ]; then
		echo "publish: the tree has uncommitted changes; a published run must come from a commit (commit or stash them):" >&2
		git status --short >&2
		exit 2
	fi
}
clean
# A published run measures every variant of its manifest: setup installs what some need (JDK 21 into .cache/jdk21
# for jep491-pinning and reactor-parallel), which a fresh machine lacks; a run there skips those variants.
scripts/setup.sh >/dev/null
rm -f bin/threadlab
make -s build >/dev/null
if [ $# -eq 0 ]; then
	# shellcheck disable=SC2046 # the status line is a space-separated list of experiment names
	set -- $(bin/threadlab status | sed -n 's/^  make publish EXPS="\(.*\)"$/\1/p')
	[ $# -gt 0 ] || { echo "publish: threadlab status names no experiment that needs a new run: every page shows a run of today's manifest"; exit 0; }
	echo "publish: from threadlab status: $*"
fi

# seconds SPEC: a Go duration as the dry run prints it (1h2m3s, 44m24s, 58s) in whole seconds.
seconds() {
	local d=$1 s=0
	[[ $d =~ ([0-9]+)h ]] && s=$((s + BASH_REMATCH[1] * 3600))
	[[ $d =~ ([0-9]+)m ]] && s=$((s + BASH_REMATCH[1] * 60))
	[[ $d =~ ([0-9]+)s ]] && s=$((s + BASH_REMATCH[1]))
	echo "$s"
}

deadline=
if [ -n "$until_hm" ]; then
	deadline=$(date -u -d "today $until_hm" +%s)
	[ "$deadline" -gt "$(date -u +%s)" ] || deadline=$(date -u -d "tomorrow $until_hm" +%s)
fi

status=0
ran=0
for e in "$@"; do
	clean . ':!data' ':!reports' # the runs before this one changed data/ and reports/, nothing else may change
	plan=$(bin/threadlab run --dry-run "experiments/$e.yaml" 2>/dev/null | sed -n 's/^estimate: \([0-9hms]*\) wall.*/\1/p')
	[ -n "$plan" ] || { echo "publish: $e: the dry run printed no estimate" >&2; status=1; continue; }
	need=$(($(seconds "$plan") * 11 / 10))
	if [ -n "$deadline" ] && [ $(($(date -u +%s) + need)) -gt "$deadline" ]; then
		echo "publish: $e: skipped, its plan ($plan, +10%) ends after $until_hm UTC"
		continue
	fi
	echo "publish: $e: planned $plan, started $(date -u +%H:%M:%S) UTC"
	rc=0
	timeout --signal=INT --kill-after=2m $((need * 3 / 2)) bin/threadlab run "experiments/$e.yaml" || rc=$?
	case $rc in
	0) echo "publish: $e: done $(date -u +%H:%M:%S) UTC"
		ran=1
		run=$(ls -td "data/$e"/*/ | head -1)
		if grep -q '"skipped_variants"' "$run/run.json"; then
			echo "publish: $e: ${run%/} skipped variants (see its run.json skipped_variants); do not publish it: fix the host (make setup) and run again" >&2
			status=1
		fi ;;
	124) echo "publish: $e: overran 1.5x its plan and was interrupted; its finished trials are on disk" >&2; status=1 ;;
	*) echo "publish: $e: exit $rc" >&2; status=1 ;;
	esac
done
if [ $ran = 1 ]; then
	echo "publish: re-rendering the site (threadlab site)"
	bin/threadlab site >/dev/null || { echo "publish: threadlab site failed; run it again before committing reports/" >&2; status=1; }
fi
exit $status
