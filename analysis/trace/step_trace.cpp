// StepTraceObserver: every observation is written as it comes (the writer streams it to the file);
// the observer keeps only what must wait for a partner: the first end of a model-parallel transfer
// (until its other end is reported, for the receive's wait and the flow arrow; step_trace_p2p.cpp),
// each ring rank's step progress while the ring runs and the steps it completed until its
// collective's slice is written (step_trace_rings.cpp; a thread's slices go to the writer enclosing
// ones first), and one utilization bin per link.
#include "analysis/trace/step_trace.h"

#include <algorithm>
#include <string>

#include "sim/error.h"
#include "topology/gpu_list.h"

namespace hybridsim::analysis {

namespace {

using workloads::CollectiveRole;
using workloads::Phase;

bool is_p2p(CollectiveRole role) {
  return role == CollectiveRole::Activation || role == CollectiveRole::ActivationGradient;
}

// Global ranks everywhere (as in the thread names send→GPU9 and the GPU filter), the machine after:
// "GPU 11 · node 1".
std::string gpu_process_name(const topology::Topology& topology, int rank) {
  const topology::DeviceInfo& d = topology.device(topology.gpus()[static_cast<std::size_t>(rank)]);
  return "GPU " + std::to_string(rank) + " · node " + std::to_string(d.node.value_or(0));
}

const topology::Topology& topology_of(const StepSetup& setup) {
  if (setup.profile == nullptr || setup.topology == nullptr)
    throw InternalError("StepTraceObserver: the setup needs a profile and a topology");
  return *setup.topology;
}

// A list of GPUs none of which runs anything would write a trace of the network alone, silently.
void refuse_idle_filter(const StepTraceOptions& options, const workloads::StepProgram& program,
                        const std::vector<char>& keep_gpu) {
  if (!options.gpus || std::find(keep_gpu.begin(), keep_gpu.end(), 1) != keep_gpu.end()) return;
  std::vector<int> used;
  for (std::size_t g = 0; g < program.worker_of_gpu.size(); ++g)
    if (program.worker_of_gpu[g] >= 0) used.push_back(static_cast<int>(g));
  throw InputError((options.gpus_given.empty()
                        ? "trace GPU filter " + topology::format_gpu_list(*options.gpus)
                        : options.gpus_given) +
                   ": none of these GPUs runs anything in this step (it uses GPUs " +
                   topology::format_gpu_list(used) + "); expected some of those");
}

}  // namespace

ChromeTraceOptions StepTraceObserver::writer_options(const StepTraceOptions& options,
                                                     const topology::Topology& topology) {
  if (options.utilization_bin <= sim::Time::zero())
    throw InputError("trace utilization bin " + sim::format_time(options.utilization_bin) +
                     ": expected a positive time");
  ChromeTraceOptions out;
  out.gzip = options.gzip;
  out.window = options.window;
  if (options.gpus) {
    const auto count = static_cast<int>(topology.gpus().size());
    std::set<TracePid> pids{network_pid(topology)};
    for (const int g : *options.gpus) {
      if (g < 0 || g >= count)
        throw InputError("trace GPU filter: GPU " + std::to_string(g) + " does not exist (the topology " +
                         topology.name() + " has GPUs 0-" + std::to_string(count - 1) + ")");
      pids.insert(gpu_pid(g));
    }
    out.pids = std::move(pids);
  }
  return out;
}

StepTraceObserver::StepTraceObserver(ChromeTraceWriter& writer, const StepSetup& setup,
                                     const workloads::StepProgram& program, const StepTraceOptions& options)
    : writer_(writer),
      topology_(topology_of(setup)),
      profile_(*setup.profile),
      program_(program),
      options_(options),
      network_pid_(network_pid(topology_)),
      link_lanes_(writer) {
  const ChromeTraceOptions checked = writer_options(options_, topology_);  // validates the filter
  const std::size_t gpu_count = topology_.gpus().size();
  if (program_.gpus.size() != gpu_count)
    throw InternalError("StepTraceObserver: the program is not for this topology");
  keep_gpu_.assign(gpu_count, 0);
  for (std::size_t g = 0; g < gpu_count; ++g)
    keep_gpu_[g] = program_.worker_of_gpu[g] >= 0 &&
                   (!checked.pids || checked.pids->contains(gpu_pid(static_cast<int>(g))));
  refuse_idle_filter(options_, program_, keep_gpu_);

  comm_tid_.assign(gpu_count, 0);
  for (std::size_t g = 0; g < gpu_count; ++g) {
    const auto& streams = program_.gpus[g].streams;
    for (std::size_t s = 0; s < streams.size() && comm_tid_[g] == 0; ++s)
      for (const sim::Task& t : streams[s].tasks)
        if (t.kind == sim::TaskKind::Collective && !is_p2p(program_.collectives[t.id].role)) {
          comm_tid_[g] = static_cast<TraceTid>(s) + 1;
          break;
        }
  }

  label_names_.reserve(program_.labels.size());
  for (const workloads::KernelLabel& l : program_.labels) {
    if (l.phase == Phase::Optimizer) {
      label_names_.push_back("optimizer · " + profile_.optimizer.name);
      continue;
    }
    if (workloads::is_gradient_copy(l.phase)) {  // "bucket 3 · copy in", "all-gather softmax · copy out"
      const workloads::CollectiveSpec& c = program_.copy_bucket(l);
      label_names_.push_back((c.role == CollectiveRole::GradientAllReduce
                                  ? "bucket " + std::to_string(c.bucket)
                                  : "all-gather " + profile_.ops[c.op_index].name) +
                             (l.phase == Phase::GradientCopyIn ? " · copy in" : " · copy out"));
      continue;
    }
    const workloads::Op& op = profile_.ops[l.op];
    const auto& kernels = l.phase == Phase::Forward ? op.forward : op.backward;
    // A pipeline's kernels say whose micro-batch they run (pipeline_program.h).
    label_names_.push_back(op.name + " · " + kernels[l.kernel].name +
                           (l.phase == Phase::Backward ? " (bwd)" : "") +
                           (l.micro_batch >= 0 ? " · micro-batch " + std::to_string(l.micro_batch) : ""));
  }
  optimizer_bytes_.assign(static_cast<std::size_t>(program_.mp), sim::Bytes());
  for (std::size_t v = 0; v < profile_.ops.size() && v < setup.placement.gpu_of_op.size(); ++v) {
    const auto k = static_cast<std::size_t>(setup.placement.gpu_of_op[v]);
    if (profile_.ops[v].has_gradient() && k < optimizer_bytes_.size())
      optimizer_bytes_[k] += profile_.ops[v].update_bytes(program_.dp);
  }
  collective_names_.resize(program_.collectives.size());
  ran_.resize(program_.collectives.size());
  held_steps_.resize(gpu_count);

  // Links: all of them, or those with an end in a machine that holds a kept GPU.
  const sim::LinkTable& links = topology_.links();
  keep_link_.assign(links.size(), 1);
  if (options_.gpus) {
    std::vector<char> node_kept(static_cast<std::size_t>(std::max(topology_.node_count(), 1)), 0);
    for (std::size_t g = 0; g < gpu_count; ++g)
      if (keep_gpu_[g])
        node_kept[static_cast<std::size_t>(topology_.device(topology_.gpus()[g]).node.value_or(0))] = 1;
    auto in_kept_node = [&](topology::DeviceId d) {
      const auto node = topology_.device(d).node;
      return node && static_cast<std::size_t>(*node) < node_kept.size() &&
             node_kept[static_cast<std::size_t>(*node)];
    };
    for (sim::LinkId l = 0; l < links.size(); ++l) {
      const topology::LinkEnds& e = topology_.link_ends(l);
      keep_link_[l] = in_kept_node(e.from) || in_kept_node(e.to);
    }
  }
  link_bins_.assign(links.size(), BusyFractionBins(options_.utilization_bin));
  init_memory_levels(setup);
  memory_started_.assign(gpu_count, 0);
  arrivals_ = pipeline_arrivals(program_);
  if (!arrivals_.empty()) stages_.resize(gpu_count);
  write_metadata();
}

void StepTraceObserver::write_metadata() {
  for (std::size_t g = 0; g < keep_gpu_.size(); ++g) {
    if (!keep_gpu_[g]) continue;
    const int rank = static_cast<int>(g);
    const int stands_for = g < options_.stands_for.size() ? options_.stands_for[g] : 1;
    writer_.process_name(gpu_pid(rank), gpu_process_name(topology_, rank) +
                                            (stands_for > 1 ? " · for " + std::to_string(stands_for) + " GPUs"
                                                            : std::string()));
    writer_.process_sort_index(gpu_pid(rank), rank);
    const auto& streams = program_.gpus[g].streams;
    for (std::size_t s = 0; s < streams.size(); ++s) {
      writer_.thread_name(gpu_pid(rank), static_cast<TraceTid>(s) + 1, streams[s].name);
      writer_.thread_sort_index(gpu_pid(rank), static_cast<TraceTid>(s) + 1, static_cast<std::int64_t>(s));
    }
  }
  if (!options_.links) return;
  writer_.process_name(network_pid_, "network");
  writer_.process_sort_index(network_pid_, static_cast<std::int64_t>(keep_gpu_.size()));
  if (options_.detail == TraceDetail::Messages) {
    // Tracks in link order, so the link threads sort by link id; a thread appears with its first message.
    link_track_.assign(keep_link_.size(), 0);
    for (sim::LinkId l = 0; l < keep_link_.size(); ++l)
      if (keep_link_[l]) link_track_[l] = link_lanes_.track(network_pid_, topology_.links()[l].name);
  }
}

bool StepTraceObserver::outside_window(sim::Time start, sim::Time end) const {
  if (!options_.window) return false;
  const TraceWindow& w = *options_.window;
  if (start == end) return !(w.start <= start && start < w.end);
  return !(start < w.end && end > w.start);
}

void StepTraceObserver::on_kernel(std::uint32_t gpu, std::uint32_t stream, std::uint32_t task,
                                  sim::Time start, sim::Time end) {
  if (!keeps(gpu)) return;
  const sim::Task& t = program_.gpus[gpu].streams[stream].tasks[task];
  write_memory_sample(gpu, program_.labels[t.id], start, end);  // the writer windows counters itself
  if (is_stage_compute(gpu, stream)) return hold_stage_task(gpu, task, start, end);
  write_kernel(gpu, stream, task, start, end);
}

void StepTraceObserver::write_kernel(std::uint32_t gpu, std::uint32_t stream, std::uint32_t task,
                                     sim::Time start, sim::Time end) {
  if (outside_window(start, end)) return;
  const sim::Task& t = program_.gpus[gpu].streams[stream].tasks[task];
  const workloads::KernelLabel& label = program_.labels[t.id];
  const TracePid pid = gpu_pid(static_cast<int>(gpu));
  const TraceTid tid = static_cast<TraceTid>(stream) + 1;
  const std::string& name = label_names_[t.id];
  if (label.phase == Phase::Optimizer) {
    const auto k = static_cast<std::size_t>(program_.mp_rank_of_gpu[gpu]);
    writer_.complete(pid, tid, name, "optimizer", start, end,
                     {{"phase", "optimizer"}, {"optimizer", profile_.optimizer.name},
                      {"parameter_bytes", optimizer_bytes_[k].count()}});
    return;
  }
  if (workloads::is_gradient_copy(label.phase)) {
    const std::string_view phase = workloads::phase_name(label.phase);
    const workloads::CollectiveSpec& c = program_.copy_bucket(label);
    const std::int64_t bytes = label.phase == Phase::GradientCopyOut ? c.size.count()
                               : c.role == CollectiveRole::GradientAllGather
                                   ? c.size.count() / static_cast<std::int64_t>(c.members.size())
                                   : c.size.count();
    writer_.complete(pid, tid, name, phase, start, end, {{"phase", phase}, {"bytes", bytes}});
    return;
  }
  const workloads::Op& op = profile_.ops[label.op];
  const bool forward = label.phase == Phase::Forward;
  const workloads::Kernel& kernel = (forward ? op.forward : op.backward)[label.kernel];
  const std::string_view phase = workloads::phase_name(label.phase);
  const TraceArg args[] = {{"op", op.name},
                           {"layer", op.layer},
                           {"phase", phase},
                           {"kernel", kernel.name},
                           {"activation_bytes", op.activation_bytes.count()},
                           {"gradient_bytes", op.gradient_bytes.count()},
                           {"step", op.step.value_or(0)},
                           {"micro_batch", label.micro_batch}};
  if (label.micro_batch >= 0) {  // a pipeline's kernel: its micro-batch in place of the (absent) step
    const TraceArg pipelined[] = {args[0], args[1], args[2], args[3], args[4], args[5], args[7]};
    writer_.complete(pid, tid, name, phase, start, end, std::span<const TraceArg>(pipelined, 7));
    return;
  }
  writer_.complete(pid, tid, name, phase, start, end,
                   std::span<const TraceArg>(args, op.step ? 7 : 6));
}

const std::string& StepTraceObserver::collective_name(std::uint32_t c) {
  std::string& name = collective_names_[c];
  if (!name.empty()) return name;
  const workloads::CollectiveSpec& spec = program_.collectives[c];
  name = std::string(sim::collective_op_name(spec.op));
  if (spec.role == CollectiveRole::GradientAllReduce)
    name += " bucket " + std::to_string(spec.bucket);
  else if (spec.role == CollectiveRole::UpdatedParameterAllGather)
    name += " updated parameters";
  else if (spec.role == CollectiveRole::ParameterAllGather)
    name += " parameters " + profile_.ops[spec.op_index].name;
  else if (spec.role == CollectiveRole::NormGradientAllReduce)  // sequence parallelism's, on the TP group
    name += " norm gradients";
  else
    name += " " + profile_.ops[spec.op_index].name;
  name += " · " + sim::human_bytes(spec.size) + " · ";
  // One GPU's collective (a dp 1 step's gradient all-reduce) sends nothing and ends as it starts; the
  // planner's NCCL model still picks a protocol for it by its size (LL, Simple), which nothing runs.
  if (spec.members.size() == 1) return name += "1 GPU, nothing sent";
  name += std::to_string(spec.members.size()) + " GPUs · " + std::string(ran_algorithm(c));
  return name;
}

void StepTraceObserver::on_plan(std::uint32_t c, const workloads::CollectivePlan& plan) {
  ran_[c] = {plan.algorithm, plan.protocol};
}

std::string_view StepTraceObserver::ran_algorithm(std::uint32_t c) const {
  if (ran_[c].algorithm == workloads::AllReduceAlgorithm::Auto)
    throw InternalError("a trace's collective " + std::to_string(c) + " ran with no plan told");
  // An all-to-all is NCCL's grouped sends, each pair on its own route (its plan says Ring by default).
  if (program_.collectives[c].op == sim::CollectiveOp::AllToAll) return "point-to-point";
  return workloads::algorithm_name(ran_[c].algorithm);
}

void StepTraceObserver::on_collective(std::uint32_t gpu, std::uint32_t stream, std::uint32_t task,
                                      sim::Time start, sim::Time end) {
  const sim::Task& t = program_.gpus[gpu].streams[stream].tasks[task];
  const workloads::CollectiveSpec& spec = program_.collectives[t.id];
  if (is_p2p(spec.role)) {  // also for a filtered GPU, whose start its kept peer's slices need
    write_p2p(gpu, stream, t.id, t.rank, start, end);
    return;
  }
  if (!keeps(gpu)) return;
  if (is_stage_compute(gpu, stream)) return hold_stage_task(gpu, task, start, end);
  write_collective(gpu, stream, task, start, end);
}

void StepTraceObserver::write_collective(std::uint32_t gpu, std::uint32_t stream, std::uint32_t task,
                                         sim::Time start, sim::Time end) {
  const sim::Task& t = program_.gpus[gpu].streams[stream].tasks[task];
  const workloads::CollectiveSpec& spec = program_.collectives[t.id];
  const TraceTid tid = static_cast<TraceTid>(stream) + 1;
  if (!outside_window(start, end)) {
    const bool lone = spec.members.size() == 1;  // nothing ran: no algorithm, no protocol (collective_name)
    TraceArg args[] = {{"op", sim::collective_op_name(spec.op)},
                       {"bytes", spec.size.count()},
                       {"gpus", spec.members.size()},
                       {"rank", t.rank},
                       {"algorithm", lone ? std::string_view() : ran_algorithm(t.id)},
                       {"protocol", sim::protocol_name(ran_[t.id].protocol)},
                       {"last_op", profile_.ops[spec.op_index].name},
                       {"bucket", spec.bucket}};
    std::size_t count = spec.role == CollectiveRole::GradientAllReduce ? 8 : 7;
    if (lone) {
      args[4] = args[6];
      args[5] = args[7];
      count -= 2;
    }
    writer_.complete(gpu_pid(static_cast<int>(gpu)), tid, collective_name(t.id), "collective", start, end,
                     std::span<const TraceArg>(args, count));
  }
  if (tid == comm_tid_[gpu]) write_held_steps(gpu, start, end);
}

void StepTraceObserver::write_counter_samples(sim::LinkId link) {
  const std::string& name = topology_.links()[link].name;
  for (const auto& s : samples_) writer_.counter(network_pid_, name, s.ts, {{"utilization", s.fraction}});
  samples_.clear();
}

void StepTraceObserver::on_hop(const sim::HopRecord& hop) {
  if (!options_.links || !keep_link_[hop.link]) return;
  link_bins_[hop.link].add(hop.start, hop.finish, samples_);
  if (!samples_.empty()) write_counter_samples(hop.link);
  if (options_.detail != TraceDetail::Messages || outside_window(hop.start, hop.finish)) return;
  const TraceTid tid = link_lanes_.lane(link_track_[hop.link], hop.start, hop.finish);
  writer_.complete(network_pid_, tid, "message", "message", hop.start, hop.finish,
                   {{"bytes", hop.bytes.count()}, {"tag", hop.tag}});
}

void StepTraceObserver::finish(sim::Time step_end) {
  finish_stages(step_end);
  for (std::uint32_t g = 0; g < keep_gpu_.size(); ++g)  // a GPU that ran no op holds its persistent parts
    if (keep_gpu_[g]) write_memory_start(g, sim::Time::max());
  for (sim::LinkId l = 0; l < link_bins_.size(); ++l) {
    if (!link_bins_[l].is_used()) continue;
    link_bins_[l].finish(samples_);
    write_counter_samples(l);
  }
}

}  // namespace hybridsim::analysis
