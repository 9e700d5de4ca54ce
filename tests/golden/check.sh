#!/usr/bin/env bash
# One golden of tests/golden/ (tesh-style): runs the command line tool on a shipped scenario (or the
# CI study) and compares what it prints and the files it writes with the committed expected output,
# byte for byte; prints a unified diff of each file that differs. `tests/golden/update.sh BUILD_DIR`
# rewrites them all.
#
# Usage: tests/golden/check.sh HYBRIDSIM SOURCE_DIR WORK_DIR CASE
#   With HYBRIDSIM_GOLDEN_UPDATE=1 (update.sh sets it) it writes the goldens instead of comparing.
#   CASE: a scenario file relative to SOURCE_DIR (scenarios/examples/dgx1-gnmt-dp8.yaml), or
#         scenarios/study/ci.yaml for the study's report.
#
# What each case runs, and the goldens it compares (NAME: the file's path below scenarios/, without
# .yaml):
#   a scenario without a sweep: block   `hybridsim run FILE --out out -q` (with --set
#                                        outputs.formats=[table, json] where the file asks for no JSON)
#       examples/NAME.txt              what it prints (the table, then "outputs in out")
#       examples/NAME.summary.json     the summary.json it writes
#   a sweep                              `hybridsim sweep FILE --out out --jobs 1 -q`
#       NAME.txt                       what it prints
#       NAME.results.csv               every point's row
#       NAME.summary.json              the sweep's summary.json
#   the studies scenarios/study/ci.yaml and ci-llm.yaml
#                                        `hybridsim study FILE --out out --no-plots -q`
#       study/NAME.txt                 what it prints
#       study/NAME/FILE                each file of the report folder
# Nothing they print or write depends on the wall clock or the machine (progress lines, the only
# timed output, go to stderr and are off with -q); each case runs in a folder of its own under
# WORK_DIR, with a link to SOURCE_DIR/scenarios and the output folder "out", so that the paths it
# prints are the same in every checkout and build folder.
set -euo pipefail
hybridsim=$1 source_dir=$2 work=$3 case=$4
name=${case#scenarios/}
name=${name%.yaml}
golden=$source_dir/tests/golden/$name
dir=$work/$(echo "$name" | tr / -)
rm -rf "$dir" && mkdir -p "$dir"
cd "$dir"
# The scenario is named as README's commands name it (scenarios/...), whatever the checkout's path.
ln -s "$source_dir/scenarios" scenarios

if [ "$case" = scenarios/study/ci.yaml ] || [ "$case" = scenarios/study/ci-llm.yaml ]; then
  "$hybridsim" study "$case" --out out --no-plots -q > printed.txt
  outputs=(printed.txt:.txt)
  for f in $(cd out && find . -type f | sed 's|^\./||' | LC_ALL=C sort); do outputs+=("out/$f:/$f"); done
elif grep -q '^sweep:' "$case"; then
  "$hybridsim" sweep "$case" --out out --jobs 1 -q > printed.txt
  outputs=(printed.txt:.txt out/results.csv:.results.csv out/summary.json:.summary.json)
else
  # summary.json is written when outputs.formats lists json; the scenarios that do not are asked to.
  formats=()
  grep -Eq '^ *formats:.*json' "$case" || formats=(--set "outputs.formats=[table, json]")
  "$hybridsim" run "$case" "${formats[@]}" --out out -q > printed.txt
  outputs=(printed.txt:.txt out/summary.json:.summary.json)
fi

status=0
for pair in "${outputs[@]}"; do
  produced=${pair%%:*} expected=$golden${pair#*:}
  if [ "${HYBRIDSIM_GOLDEN_UPDATE:-0}" = 1 ]; then
    mkdir -p "$(dirname "$expected")"
    cp "$produced" "$expected.tmp" && mv "$expected.tmp" "$expected"
  elif [ ! -f "$expected" ]; then
    echo "golden: no ${expected#"$source_dir"/} (tests/golden/update.sh BUILD_DIR writes it)"
    status=1
  elif ! cmp -s "$expected" "$produced"; then
    echo "golden: ${expected#"$source_dir"/} differs from what $case gives now:"
    diff -u --label "expected ${expected#"$source_dir"/}" --label "now" "$expected" "$produced" | head -n 200 || true
    status=1
  fi
done
if [ "${HYBRIDSIM_GOLDEN_UPDATE:-0}" = 1 ]; then echo "golden: $case: wrote ${#outputs[@]} files"
elif [ "$status" = 0 ]; then echo "golden: $case: ${#outputs[@]} files as expected"; fi
exit $status
