// StepTraceObserver on a pipeline stage's compute thread: each micro-batch's forward and backward
// as a slice enclosing its kernels and TP collectives ("forward · micro-batch 3"), the recomputed
// forward within a backward as its own slice ("recompute · micro-batch 3": the kernels that full or
// selective recomputation names "recompute_…"), and a "bubble" slice wherever the stream waited for
// an activation or its gradient from another stage, or had nothing left while the others finished.
// The bubble is the time GpuStepMetrics::pipeline_bubble counts (analysis/step/step_metrics.h).
// A micro-batch's slices are held until the next task on the stream shows that it has ended (at
// most one chunk's kernels per stage), since a thread's enclosing slice must be written first.
// Under the interleaved schedule a stage runs each micro-batch once per model chunk it holds, so
// the slices name the chunk too ("forward · micro-batch 3 · chunk 5", arg "chunk": the global
// model chunk, 0 .. pp·v − 1, chunk c on stage c mod pp).
#include <algorithm>
#include <string>
#include <vector>

#include "analysis/step/step_metrics.h"
#include "analysis/trace/step_trace.h"

namespace hybridsim::analysis {

using workloads::Phase;

namespace {

// The model chunks a stage's compute stream runs: its runs of micro-batch 0's forward kernels, each
// chunk's begun after the stream waited on another stage (chunk c + pp's input comes from the
// stage that ran chunk c + pp − 1) or after other micro-batches' kernels.
int stage_chunks(const sim::TaskList& tasks, const std::vector<workloads::KernelLabel>& labels,
                 const std::vector<std::uint8_t>& arrivals) {
  int chunks = 0;
  bool in_run = false;
  for (const sim::Task& t : tasks) {
    if (t.kind == sim::TaskKind::Wait && arrivals[t.id] != 0) in_run = false;
    if (t.kind != sim::TaskKind::Kernel || labels[t.id].micro_batch < 0) continue;
    const bool first = labels[t.id].micro_batch == 0 && labels[t.id].phase == Phase::Forward;
    if (first && !in_run) ++chunks;
    in_run = first;
  }
  return std::max(chunks, 1);
}

}  // namespace

void StepTraceObserver::hold_stage_task(std::uint32_t gpu, std::uint32_t task, sim::Time start,
                                        sim::Time end) {
  StageThread& st = stages_[gpu];
  const sim::TaskList& tasks = program_.gpus[gpu].streams[0].tasks;
  std::uint8_t waited = 0;  // on another stage, since the last task reported: what for
  for (std::uint32_t i = st.next_task; i < task; ++i)
    if (tasks[i].kind == sim::TaskKind::Wait && arrivals_[tasks[i].id] != 0) waited = arrivals_[tasks[i].id];
  const sim::Task t = tasks[task];
  const workloads::KernelLabel* label = t.kind == sim::TaskKind::Kernel ? &program_.labels[t.id] : nullptr;
  const bool pipelined = label != nullptr && label->micro_batch >= 0;
  const bool backward = pipelined && label->phase == Phase::Backward;
  // A copy into a gradient buffer or a TP collective belongs to the micro-batch around it; the
  // optimizer and the copies out of the buffers come after every micro-batch.
  const bool leaves = label != nullptr && !pipelined && label->phase != Phase::GradientCopyIn;
  if (waited != 0 || leaves ||
      (pipelined && (label->micro_batch != st.micro_batch || backward != st.backward)))
    write_stage_group(gpu);
  if (waited != 0 && start > st.last_end) write_bubble(gpu, st.last_end, start, waited);
  if (pipelined && st.micro_batch < 0) {
    st.micro_batch = label->micro_batch;
    st.backward = backward;
  }
  const StageSlice slice{task, start, end};
  if (st.micro_batch >= 0)
    st.held.push_back(slice);
  else
    write_stage_slice(gpu, slice);
  st.next_task = task + 1;
  st.last_end = end;
}

void StepTraceObserver::write_stage_slice(std::uint32_t gpu, const StageSlice& s) {
  const sim::Task& t = program_.gpus[gpu].streams[0].tasks[s.task];
  if (t.kind == sim::TaskKind::Kernel)
    write_kernel(gpu, 0, s.task, s.start, s.end);
  else
    write_collective(gpu, 0, s.task, s.start, s.end);
}

void StepTraceObserver::write_stage_group(std::uint32_t gpu) {
  StageThread& st = stages_[gpu];
  if (st.micro_batch < 0) return;
  const TracePid pid = gpu_pid(static_cast<int>(gpu));
  std::string micro_batch = " · micro-batch " + std::to_string(st.micro_batch);
  const std::int64_t stage = program_.mp_rank_of_gpu[gpu];
  const sim::TaskList& tasks = program_.gpus[gpu].streams[0].tasks;
  if (st.chunks == 0) st.chunks = stage_chunks(tasks, program_.labels, arrivals_);
  std::int64_t chunk = -1;  // the global model chunk, interleaved only
  if (st.chunks > 1) {
    const auto j = static_cast<std::size_t>(st.micro_batch);
    std::vector<std::int32_t>& written = st.backward ? st.backwards : st.forwards;
    if (written.size() <= j) written.resize(j + 1, 0);
    const std::int32_t k = written[j]++;
    chunk = static_cast<std::int64_t>(st.backward ? st.chunks - 1 - k : k) * program_.mp + stage;
    micro_batch += " · chunk " + std::to_string(chunk);
  }
  const auto slice = [&](const char* what, const char* category, sim::Time start, sim::Time end) {
    if (outside_window(start, end)) return;
    if (chunk < 0)
      writer_.complete(pid, 1, what + micro_batch, category, start, end,
                       {{"micro_batch", st.micro_batch}, {"stage", stage}});
    else
      writer_.complete(pid, 1, what + micro_batch, category, start, end,
                       {{"micro_batch", st.micro_batch}, {"stage", stage}, {"chunk", chunk}});
  };
  const auto recomputes = [&](const StageSlice& s) {
    const sim::Task t = tasks[s.task];
    if (t.kind != sim::TaskKind::Kernel) return false;
    const workloads::KernelLabel& l = program_.labels[t.id];
    return l.phase == Phase::Backward && profile_.ops[l.op].backward[l.kernel].name.starts_with("recompute_");
  };
  slice(st.backward ? "backward" : "forward", "micro-batch", st.held.front().start, st.held.back().end);
  for (std::size_t i = 0; i < st.held.size();) {
    std::size_t last = i;  // a recomputation: its kernels and the collectives among them
    for (std::size_t k = i; k < st.held.size() && recomputes(st.held[i]); ++k) {
      if (recomputes(st.held[k])) last = k;
      else if (tasks[st.held[k].task].kind == sim::TaskKind::Kernel) break;
    }
    if (recomputes(st.held[i])) slice("recompute", "recompute", st.held[i].start, st.held[last].end);
    for (; i <= last; ++i) write_stage_slice(gpu, st.held[i]);
  }
  st.held.clear();
  st.micro_batch = -1;
}

void StepTraceObserver::write_bubble(std::uint32_t gpu, sim::Time start, sim::Time end,
                                     std::uint8_t waiting_for) {
  if (outside_window(start, end)) return;
  const char* what = waiting_for == 1   ? "an activation"
                     : waiting_for == 2 ? "an activation gradient"
                                        : "the other stages to finish";
  writer_.complete(gpu_pid(static_cast<int>(gpu)), 1, "bubble", "bubble", start, end,
                   {{"waiting_for", what}, {"stage", program_.mp_rank_of_gpu[gpu]}});
}

void StepTraceObserver::finish_stages(sim::Time step_end) {
  for (std::uint32_t g = 0; g < stages_.size(); ++g) {
    if (!keeps(g) || program_.gpus[g].streams.empty()) continue;
    write_stage_group(g);
    if (stages_[g].next_task > 0 && stages_[g].last_end < step_end)
      write_bubble(g, stages_[g].last_end, step_end, 0);
  }
}

}  // namespace hybridsim::analysis
