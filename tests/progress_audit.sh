#!/usr/bin/env bash
# The 10-second audit of issue 31 ("no command runs more than 10 s past its start without a progress
# line that estimates its end"): runs each long-running command on an input that takes more than 10 s
# on this machine and prints, as a markdown table, when its first progress line came, when its first
# line with an estimated end came ("left of about"), the longest time without a line (from the start,
# between lines, to the end), the longest time without a line that estimates the end (the same, counting
# only those), how long it ran (stopped after LIMIT s), and the machine's load average (1 minute) as the
# row ended.
# Wall times measure the machine, not the code: they are never asserted in a test.
#
# Usage: tests/progress_audit.sh BUILD_DIR [LIMIT_SECONDS=60]
#   (analysis/README.md, "Progress", has the table from the last run and the machine it ran on)
set -uo pipefail
build=$(cd "$1" && pwd) limit=${2:-60}
src=$(cd "$(dirname "$0")/.." && pwd)
hybridsim=$build/hybridsim
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A Kineto trace of about 200 MB: tests/data/kineto/single_gpu.json with CPU events the importer reads
# and passes over (python_function), as torch.profiler's with_stack traces are mostly.
make_big_trace() {
  python3 - "$src/tests/data/kineto/single_gpu.json" "$work/big_trace.json" <<'PY'
import json, sys
trace = json.load(open(sys.argv[1]))
first = min(e["ts"] for e in trace["traceEvents"] if "ts" in e)
filler = {"ph": "X", "cat": "python_function", "name": "torch/nn/modules/module.py(1501): _call_impl",
          "pid": 4242, "tid": 4242, "ts": first, "dur": 0.5, "args": {"Python id": 1, "Python parent id": 0}}
text = json.dumps(trace)
head, tail = text.rsplit("]", 1)
line = json.dumps(filler)
with open(sys.argv[2], "w") as out:
    out.write(head)
    out.write(("," + line) * (200_000_000 // (len(line) + 1)))
    out.write("]" + tail)
PY
}

# CASE NAME COMMAND...: one table row.
audit() {
  local name=$1
  shift
  local start
  start=$(date +%s.%N)
  (cd "$work" && timeout "$limit" "$@" 2>&1 >/dev/null) |
    while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done >"$work/lines"
  local end
  end=$(date +%s.%N)
  local load
  load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo "?")
  awk -v s="$start" -v e="$end" -v name="$name" -v limit="$limit" -v load="$load" '
    BEGIN { last_est = s }
    NR == 1 { first = $1 - s }
    { gap = $1 - (NR == 1 ? s : last); if (gap > longest) longest = gap; last = $1 }
    /left of about|to simulate, about/ {
      if (!est) est = $1 - s
      if ($1 - last_est > blind) blind = $1 - last_est
      last_est = $1
    }
    END {
      total = e - s
      if (e - (NR ? last : s) > longest) longest = e - (NR ? last : s)
      if (e - last_est > blind) blind = e - last_est
      a = (NR ? sprintf("%.1f s", first) : "none")
      b = (est ? sprintf("%.1f s", est) : "none")
      c = ((total >= limit - 0.5) ? sprintf("over %d s (stopped)", limit) : sprintf("%.1f s", total))
      printf "| %s | %s | %s | %.1f s | %.1f s | %s | %s |\n", name, a, b, longest, blind, c, load
    }' "$work/lines"
}

make_big_trace
echo "| command (input) | first stderr line | first estimate of the end | longest silence |" \
  "longest without an estimate | ran | load average |"
echo "|---|---|---|---|---|---|---:|"
audit "run (GNMT on 1,024 GPUs, every ring in full)" "$hybridsim" run \
  "$src/scenarios/examples/cluster256-gnmt-hybrid-mp4.yaml" --out o --set communication.fast_path=off
audit "run (variability.steps=2000)" "$hybridsim" run "$src/scenarios/examples/dgx1-gnmt-dp8.yaml" --out o \
  --set variability.steps=2000 --set variability.kernel_jitter=0.05
audit "sweep (dgx1-nvlink-sweep, 300 variability steps a point, 1 job)" "$hybridsim" sweep \
  "$src/scenarios/examples/dgx1-nvlink-sweep.yaml" --out s --jobs 1 --set variability.steps=300 \
  --set variability.kernel_jitter=0.05
audit "study (hybrid-vs-dp.yaml, 1 thread)" "$hybridsim" study "$src/scenarios/study/hybrid-vs-dp.yaml" \
  --out st --no-plots -j 1
audit "plan (gnmt on 1,024 GPUs, 1 thread)" "$hybridsim" plan -m gnmt --gpus 1024 --threads 1
audit "plan (llama3-8b on 64 H100)" "$hybridsim" plan --model llama3-8b --gpus 64 --gpu h100 --threads 1
audit "import (Kineto trace of 200 MB)" "$hybridsim" import kineto "$work/big_trace.json" --out p.yaml
audit "validate (scenarios/validate)" "$hybridsim" validate --cases "$src/scenarios/validate"
audit "collective (1,024 GPUs, 8 B to 1 GiB, every rank in full)" "$hybridsim" collective -t dgx1-v100 \
  --nodes 128 -e 1GiB --fast-path off --max-events 0
# The largest documented sizes (README's performance tables; issue 31, "Done when"): their set-up
# (the topology, every GPU's program, the fold, the collectives) before the first event.
cluster=$src/scenarios/cluster-hybrid-vs-dp.yaml
audit "run (GNMT dp 32,768 x mp 2 on 8,192 DGX-1, 65,536 GPUs)" "$hybridsim" run "$cluster" --out o \
  --set cluster.nodes=8192 --set "parallelism={dp: 32768, mp: 2}"
audit "run (GNMT DP on 8,192 DGX H100, rail-optimised, 65,536 GPUs)" "$hybridsim" run "$cluster" --out o \
  --set cluster.preset=dgx-h100 --set cluster.fabric=rail-optimized --set cluster.nodes=8192 \
  --set "parallelism={dp: 65536}"
audit "run (GPT-3 175B, tp 8 x pp 16 x dp 128, 1F1B, 16,384 H100)" "$hybridsim" run \
  "$src/scenarios/llm/gpt3-175b-pp8-dgx-a100.yaml" --out o --set cluster.preset=dgx-h100 \
  --set cluster.nodes=2048 --set cluster.fabric=rail-optimized --set parallelism.dp=128 \
  --set parallelism.pp=16 --set workload.model.layers_simulated=96 --set training.global_batch=1536 \
  --set communication.algorithm=ring
audit "run (Llama 2 7B, ZeRO-3, dp 1,024 on 128 DGX A100)" "$hybridsim" run \
  "$src/scenarios/llm/llama2-7b-zero3-dgx-a100.yaml" --out o --set cluster.nodes=128 --set parallelism.dp=1024 \
  --set training.global_batch=2048
audit "run (Mixtral 8x7B slice, ep 8 x dp 1,024 on 128 DGX H100)" "$hybridsim" run \
  "$src/scenarios/llm/mixtral-8x7b-2x-dgx-h100-ep8.yaml" --out o --set cluster.nodes=128 \
  --set parallelism.dp=1024
audit "run --trace (GNMT on 1,024 GPUs)" "$hybridsim" run \
  "$src/scenarios/examples/cluster256-gnmt-hybrid-mp4.yaml" --out o --trace t.json
audit "study (the LLM study, llm-at-scale.yaml, 1 thread)" "$hybridsim" study \
  "$src/scenarios/study/llm-at-scale.yaml" --out llm --no-plots -j 1
