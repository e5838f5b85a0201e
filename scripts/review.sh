#!/usr/bin/env bash
# The manifest-review workflow's steps, runnable locally (make review) and
# in .github/workflows/manifest-review.yml, for the experiments a change
# touches:
#   1. threadlab lint, with each problem as a GitHub annotation at file:line;
#   2. the smoke profile of each changed experiment, run twice on this
#      machine into a scratch data dir: the manifest as it is on BASE, then
#      as it is now (same binary, same host, same profile);
#   3. threadlab diff --format markdown of the base run against the head run,
#      appended to the job summary ($GITHUB_STEP_SUMMARY in Actions,
#      review-summary.md locally). A manifest new in this change has no base
#      run: its smoke run is reported alone.
# BASE is the git ref to compare with (default origin/main, else main);
# EXPERIMENTS overrides the list (space-separated experiments/*.yaml).
# In Actions, a fork's pull request wrote this summary with its own code:
# it is the fork's claim, not evidence (see the workflow's header).
set -euo pipefail
cd "$(dirname "$0")/.."

base=${BASE:-}
if [ -z "$base" ]; then
  if git rev-parse -q --verify origin/main >/dev/null; then base=origin/main; else base=main; fi
fi
if [ -n "${EXPERIMENTS:-}" ]; then
  read -r -a changed <<<"$EXPERIMENTS"
else
  mapfile -t changed < <(git diff --name-only --diff-filter=d "$base"...HEAD -- 'experiments/*.yaml' 'experiments/*.yml' 2>/dev/null || true)
fi
summary=${GITHUB_STEP_SUMMARY:-review-summary.md}
if [ -z "${GITHUB_STEP_SUMMARY:-}" ]; then : >"$summary"; fi
if [ ${#changed[@]} -eq 0 ]; then
  echo "review: no experiment changed against $base" | tee -a "$summary"
  exit 0
fi
echo "review: ${changed[*]} (against $base)"

make -s build
tl=bin/threadlab

# 1. Lint. threadlab lint prints "file:line:col: field: message" for errors
# and "file: field: warning: message" for warnings; GitHub turns
# ::error/::warning lines into annotations on the pull request's diff.
status=0
lint_out=$($tl lint "${changed[@]}" 2>&1) || status=$?
printf '%s\n' "$lint_out"
printf '%s\n' "$lint_out" | sed -nE \
  -e 's/^([^:]+\.ya?ml):([0-9]+):([0-9]+): (.*)$/::error file=\1,line=\2,col=\3::\4/p' \
  -e 's/^([^:]+\.ya?ml): ([^:]+): warning: (.*)$/::warning file=\1::\2: \3/p'
# The fence is longer than any run of backticks in the output, so a
# manifest's text cannot close it and write Markdown of its own.
n=$(printf '%s\n' "$lint_out" | grep -o '`*' | awk '{ if (length($0) > m) m = length($0) } END { print (m < 3 ? 3 : m + 1) }')
fence=$(printf '%*s' "$n" '' | tr ' ' '`')
{
  echo "## threadlab lint"
  echo
  echo "$fence"
  printf '%s\n' "$lint_out"
  echo "$fence"
  echo
} >>"$summary"
if [ "$status" -ne 0 ]; then
  echo "review: lint failed; fix the annotated lines first" >&2
  exit "$status"
fi

# 2 and 3. Smoke-run each changed experiment as it is on the base and as it
# is now, on this machine, and diff the two runs. The base manifest is
# loaded by this change's threadlab: a base that no longer loads is
# reported, and the head run stands alone.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
smoke() { # smoke <manifest> <data dir>: prints the run directory
  $tl run --quiet --profile smoke --data "$2" --reports "$2.reports" "$1" >&2 || return 1
  ls -d "$2"/*/*/ | sort | tail -1
}
for m in "${changed[@]}"; do
  name=$(basename "${m%.*}")
  base_run=""
  mkdir -p "$scratch/$name.base-manifest"
  base_m="$scratch/$name.base-manifest/$(basename "$m")"
  if git show "$base:$m" >"$base_m" 2>/dev/null; then
    echo "review: smoke run of $name as on $base"
    if ! base_run=$(smoke "$base_m" "$scratch/$name.base"); then
      printf '## %s\n\nThe smoke run of the manifest as on `%s` failed with this threadlab; the head run stands alone.\n\n' "$name" "$base" >>"$summary"
      base_run=""
    fi
  else
    printf '## %s\n\nNew in this change: no base manifest to compare with.\n\n' "$name" >>"$summary"
  fi
  echo "review: smoke run of $name as changed"
  if ! head_run=$(smoke "$m" "$scratch/$name.head"); then
    echo "## $name: the smoke run failed" >>"$summary"
    status=1
    continue
  fi
  if [ -n "$base_run" ]; then
    $tl diff --format markdown "${base_run%/}" "${head_run%/}" >>"$summary"
  else
    # No base run: the head run's own report (verdicts, medians) instead.
    md="$scratch/$name.head.reports/$name/$(basename "${head_run%/}")/report.md"
    if [ -f "$md" ]; then cat "$md" >>"$summary"; fi
  fi
  echo >>"$summary"
done
echo "review: summary in $summary"
exit "$status"
