#!/usr/bin/env bash
# Runs every fuzz target of a -DHYBRIDSIM_FUZZ=ON build for a bounded time, seeded with the shipped
# files and the tests' bad inputs. Any crash, sanitizer report, leak, timeout (10 s per input) or
# RSS over 1 GiB fails the run; the input that did it is kept under $work/findings/<target>/.
#   tests/fuzz/run_fuzzers.sh BUILD_DIR [SECONDS_PER_TARGET]     (default 30)
set -euo pipefail
build=$(realpath "$1")
seconds=${2:-30}
source=$(cd "$(dirname "$0")/../.." && pwd)
work=$build/fuzz-work
rm -rf "$work"
mkdir -p "$work"

# Seed corpora: what each reader reads in the repository, and the inputs the tests reject.
seed() {
  local target=$1; shift
  mkdir -p "$work/corpus/$target"
  local i=0
  for f in "$@"; do
    [ -f "$f" ] || continue
    cp "$f" "$work/corpus/$target/seed-$i"
    i=$((i + 1))
  done
}
mapfile -t scenarios < <(find "$source/scenarios" "$source/tests/scenarios" -name '*.yaml' -not -path '*/study/*' | sort)
seed fuzz_scenario "${scenarios[@]}"
seed fuzz_study "$source"/scenarios/study/*.yaml
seed fuzz_profile "$source"/workloads/profiles/*/*.yaml
seed fuzz_topology $(grep -l '^links:' -r "$source/tests" "$source/scenarios" 2>/dev/null | sort)
seed fuzz_kineto "$source"/tests/data/kineto/*.json
seed fuzz_pipedream "$source"/tests/data/pipedream/*.txt
mkdir -p "$work/corpus/fuzz_set"
printf 'cluster.nodes=2' > "$work/corpus/fuzz_set/seed-0"
printf 'parallelism={dp: 2, mp: 4, placement: [{match: "enc*", gpu: 0}, {match: "*", gpu: 3}]}' > "$work/corpus/fuzz_set/seed-1"
printf 'communication.message_size=256 KiB' > "$work/corpus/fuzz_set/seed-2"
printf 'sweep={parameters: [{path: parallelism.dp, values: [1, 2]}]}' > "$work/corpus/fuzz_set/seed-3"
[ -n "$(ls -A "$work/corpus/fuzz_topology")" ] ||
  printf 'nodes:\n  - {name: GPU0, kind: gpu}\n  - {name: GPU1, kind: gpu}\nlinks:\n  - {a: GPU0, b: GPU1, kind: nvlink, bandwidth: 25 GB/s}\n' \
    > "$work/corpus/fuzz_topology/seed-0"

# Inputs that once found a problem (tests/fuzz/regressions/<target>/): always in the corpus, so each
# run checks them first.
for dir in "$source"/tests/fuzz/regressions/fuzz_*; do
  [ -d "$dir" ] || continue
  name=$(basename "$dir")
  mkdir -p "$work/corpus/$name"
  for f in "$dir"/*; do cp "$f" "$work/corpus/$name/regression-$(basename "$f")"; done
done

failed=0
for target in "$build"/tests/fuzz/fuzz_*; do
  [ -x "$target" ] || continue
  name=$(basename "$target")
  mkdir -p "$work/findings/$name" "$work/corpus/$name"
  echo "fuzz: $name for ${seconds} s"
  if ! ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
      "$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=1024 -malloc_limit_mb=1024 -max_len=65536 \
      -print_final_stats=1 -artifact_prefix="$work/findings/$name/" "$work/corpus/$name" \
      > "$work/$name.log" 2>&1; then
    echo "fuzz: $name FOUND A PROBLEM (last lines of $work/$name.log; the input is in $work/findings/$name/):"
    tail -n 30 "$work/$name.log"
    failed=1
  else
    grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$work/$name.log" | tr '\n' ' ' || true
    echo
  fi
done
[ "$failed" -eq 0 ] && echo "fuzz: all targets ran ${seconds} s without findings"
exit "$failed"
