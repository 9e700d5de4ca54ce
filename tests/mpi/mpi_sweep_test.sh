#!/usr/bin/env bash
# The MPI sweep mode: `mpirun -n 2 hybridsim sweep` gives byte-identical results to one process,
# both ranks run points, a point refused or failed is a row of its own (exit 1), and a bad scenario
# ends every rank with an error and no results.
# Usage: mpi_sweep_test.sh HYBRIDSIM SOURCE_DIR WORK_DIR
set -euo pipefail
hybridsim=$1 source_dir=$2 work=$3
scenario=$source_dir/scenarios/examples/dgx1-nvlink-sweep.yaml
rm -rf "$work" && mkdir -p "$work"
# CI runs as root; a container has no peers for CMA single-copy; two ranks on any core count.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
fail() { echo "FAIL: $*" >&2; exit 1; }

# A machine where MPI itself cannot start two processes (no usable transport, a sandbox) is not a
# failure of hybridsim: say so, and let CTest report the test as skipped (exit 77).
if ! mpirun -n 2 true > "$work/launch.txt" 2>&1; then
  echo "SKIP: mpirun -n 2 cannot start processes on this machine:" >&2
  cat "$work/launch.txt" >&2
  exit 77
fi

"$hybridsim" sweep "$scenario" --out "$work/one" --jobs 1 --quiet > "$work/one.txt"
mpirun -n 2 "$hybridsim" sweep "$scenario" --out "$work/mpi" --jobs 1 --quiet > "$work/mpi.txt"
cat "$work/mpi.txt"
cmp "$work/one/results.csv" "$work/mpi/results.csv" || fail "MPI results.csv differs from one process's"
grep -q "6 points run by 2 MPI ranks" "$work/mpi.txt" || fail "expected 6 points from 2 ranks"
grep -Eq "rank 0: [1-9][0-9]*, rank 1: [1-9]" "$work/mpi.txt" || fail "a rank ran no point"
[ ! -e "$work/mpi/points.partial.csv" ] || fail "the partial file was left behind"

# A point that fails once run (its trace window starts after the 306 ms step), on whichever rank
# takes it: a row that says why, the other points run on both ranks, and the exit status is 1 (it
# stopped every rank, and no results.csv was written).
cat > "$work/bad.yaml" <<YAML
cluster: {preset: dgx1-v100}
workload: {network: gnmt}
parallelism: {dp: 8}
outputs: {trace: {file: t.json}}
sweep:
  parameters:
    - {path: outputs.trace.window, values: ["0 ms:1 ms", "10 s:11 s", "1 ms:2 ms", "2 ms:3 ms"]}
YAML
if mpirun -n 2 "$hybridsim" sweep "$work/bad.yaml" --out "$work/bad" --jobs 1 --quiet > "$work/bad.txt" 2>&1; then
  fail "an MPI sweep with a point that failed exited 0"
fi
grep -q "error: 1 of 4 points failed once run" "$work/bad.txt" || fail "no failure count: $(cat "$work/bad.txt")"
grep -q '^1,trace.window=10 s:11 s,.*,"failed once run: ' "$work/bad/results.csv" || fail "no failed row for point 1"
[ "$(grep -c ',305\.840228,' "$work/bad/results.csv")" = 3 ] || fail "expected the 3 other points' steps"

# A point the loader refuses (16 GPUs of an 8-GPU DGX-1): the others run on both ranks, its row says
# why, and the exit status is 1.
cat > "$work/refused.yaml" <<YAML
cluster: {preset: dgx1-v100}
workload: {network: gnmt}
parallelism: {dp: 8}
sweep:
  parameters:
    - {path: parallelism.dp, values: [8, 16, 4, 2]}
YAML
if mpirun -n 2 "$hybridsim" sweep "$work/refused.yaml" --out "$work/refused" --jobs 1 --quiet \
     > "$work/refused.txt" 2>&1; then
  fail "an MPI sweep with a refused point exited 0"
fi
grep -q "error: 1 of 4 points refused" "$work/refused.txt" || fail "no refusal count: $(cat "$work/refused.txt")"
grep -q '^1,parallelism.dp=16,16,.*,"refused: ' "$work/refused/results.csv" || fail "no refused row for point 1"
[ "$(wc -l < "$work/refused/results.csv")" = 5 ] || fail "expected a header and 4 rows"

# An input error found by every rank before the sweep starts ends the job the same way.
if mpirun -n 2 "$hybridsim" sweep "$scenario" --set workload.network=nope --out "$work/bad2" --quiet \
     > "$work/bad2.txt" 2>&1; then
  fail "an MPI sweep of a bad scenario exited 0"
fi
grep -q "error:" "$work/bad2.txt" || fail "no error message: $(cat "$work/bad2.txt")"
[ ! -e "$work/bad2/results.csv" ] || fail "a bad scenario wrote results.csv"
echo "mpi sweep: ok"
