#!/usr/bin/env bash
# The manifest-review workflow's steps, runnable locally (make review) and
# in .github/workflows/manifest-review.yml, for the experiments a change
# touches:
#   1. threadlab lint, with each problem as a GitHub annotation at file:line;
#   2. the smoke profile of each changed experiment, into a scratch data dir;
#   3. threadlab diff --format markdown of that smoke run against the latest
#      committed run of the experiment, appended to the job summary
#      ($GITHUB_STEP_SUMMARY in Actions, review-summary.md locally).
# BASE is the git ref to compare with (default origin/main, else main);
# EXPERIMENTS overrides the list (space-separated experiments/*.yaml).
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
{
  echo "## threadlab lint"
  echo
  echo '```'
  printf '%s\n' "$lint_out"
  echo '```'
  echo
} >>"$summary"
if [ "$status" -ne 0 ]; then
  echo "review: lint failed; fix the annotated lines first" >&2
  exit "$status"
fi

# 2 and 3. Smoke run each changed experiment and diff it against the
# committed run.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for m in "${changed[@]}"; do
  name=$(basename "${m%.*}")
  echo "review: smoke run of $name"
  if ! $tl run --quiet --profile smoke --data "$scratch/data" --reports "$scratch/reports" "$m"; then
    echo "## $name: the smoke run failed" >>"$summary"
    status=1
    continue
  fi
  new=$(ls -d "$scratch/data/$name"/*/ | sort | tail -1)
  old=$(ls -d data/"$name"/*/ 2>/dev/null | sort | tail -1 || true)
  if [ -z "$old" ]; then
    printf '## %s\n\nNo committed run under data/%s/ to compare with; the smoke run is the first.\n\n' "$name" "$name" >>"$summary"
    continue
  fi
  $tl diff --format markdown "${old%/}" "${new%/}" >>"$summary"
  echo >>"$summary"
done
echo "review: summary in $summary"
exit "$status"
