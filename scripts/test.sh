#!/usr/bin/env bash
# Runs every tap test and ends with one line CI can read: `tests: N passed, M failed`.
# Exits non-zero when a test fails (and, under `make coverage`, when coverage falls below the
# thresholds in .taprc).
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p .tap
npx tap --reporter=tap "$@" 2>&1 | tee .tap/last-run.tap
status=${PIPESTATUS[0]}
passed=$(grep -cE '^\s*ok [0-9]+' .tap/last-run.tap)
failed=$(grep -cE '^\s*not ok [0-9]+' .tap/last-run.tap)
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  echo "tap exited $status with no failing test: coverage below the .taprc thresholds, or a crash (see above)"
  failed=1
fi
# What failed, named again at the end: CI shows only the last lines of a run. A failing subtest's
# line comes before its file's, so each file's failures read in order.
if [ "$failed" -gt 0 ]; then
  echo "failed:"
  grep -aE '^\s*not ok [0-9]+' .tap/last-run.tap | head -40
fi
echo "tests: ${passed} passed, ${failed} failed"
[ "$status" -eq 0 ] && [ "$failed" -eq 0 ]
