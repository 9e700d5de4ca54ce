#include "analysis/collective/collective_sweep.h"

#include <cmath>
#include <cstdio>
#include <memory>
#include <set>
#include <string>

#include "sim/collective_chain.h"
#include "sim/error.h"
#include "sim/ring_collective.h"

namespace hybridsim::analysis {

namespace {

std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// The tree and hierarchical algorithms are all-reduces; the planner runs every other op as a
// ring, so asking for them there would silently do something else.
void check_algorithm(const CollectiveSweepOptions& options) {
  const auto a = options.comm.algorithm;
  if ((a == workloads::AllReduceAlgorithm::Tree || a == workloads::AllReduceAlgorithm::Hierarchical) &&
      options.op != sim::CollectiveOp::AllReduce)
    throw InputError("--algorithm " + std::string(workloads::algorithm_name(a)) +
                     " applies only to all-reduce (--op allreduce), not to " +
                     std::string(sim::collective_op_name(options.op)) +
                     "; broadcast, all-gather and reduce-scatter run as rings (--algorithm ring or auto)");
}

}  // namespace

void fill_row(CollectiveSweepRow& row, const sim::Collective& coll, sim::Bytes size,
              const CollectiveSweepOptions& options);

CollectiveSweepRow run_one_collective(const topology::Topology& topology,
                                      const CollectiveSweepOptions& options, sim::Bytes size) {
  check_algorithm(options);
  workloads::CommPlanner planner(topology, options.comm);
  workloads::CollectiveSpec spec;
  spec.op = options.op;
  spec.size = size;
  spec.members = options.gpus;
  workloads::CollectivePlan plan = planner.plan(spec);
  CollectiveSweepRow row;
  row.algorithm = plan.algorithm;
  row.protocol = plan.protocol;
  row.channels = plan.channels;
  row.nccl = plan.nccl;
  sim::CollectiveConfig config = options.collective;
  for (;;) {
    sim::EventQueue queue;
    sim::Network network(queue, topology.links());
    std::unique_ptr<sim::Collective> coll = workloads::make_collective(network, plan, config);
    coll->start_all();
    queue.run();
    if (!coll->is_done()) throw InternalError("collective did not finish");
    if (network.interfered() && config.fast_path != sim::FastPath::Off) {
      // Rings of a hierarchical chain crossed each other's links while one was folded.
      config.fast_path = sim::FastPath::Off;
      row.rerun = true;
      continue;
    }
    fill_row(row, *coll, size, options);
    return row;
  }
}

void fill_row(CollectiveSweepRow& row, const sim::Collective& coll, sim::Bytes size,
              const CollectiveSweepOptions& options) {
  const auto n = static_cast<std::uint32_t>(options.gpus.size());
  row.size = size;
  row.count = size.count() / 4;
  row.time = coll.finish_time();
  const double seconds = row.time.to_seconds();
  row.algbw_gb_per_s = seconds > 0 ? static_cast<double>(size.count()) / seconds * 1e-9 : 0;
  row.busbw_gb_per_s = row.algbw_gb_per_s * sim::bus_factor(options.op, static_cast<int>(n));
  row.messages = coll.messages_sent();
  row.bytes_by_link_kind = coll.bytes_by_link_kind();
  row.path = coll.simulation_path();
}

std::vector<CollectiveSweepRow> run_collective_sweep(const topology::Topology& topology,
                                                     const CollectiveSweepOptions& options) {
  if (options.gpus.size() < 2) throw InputError("a collective needs at least 2 GPUs");
  check_algorithm(options);
  if (options.min_bytes.count() <= 0 || options.max_bytes < options.min_bytes)
    throw InputError("sizes must satisfy 0 < min-bytes <= max-bytes");
  if (options.max_bytes > kMaxCollectiveBytes)
    throw InputError("--max-bytes " + sim::format_bytes(options.max_bytes) + " is beyond " +
                     sim::format_bytes(kMaxCollectiveBytes) + " per rank, more than any GPU holds; expected at most " +
                     sim::format_bytes(kMaxCollectiveBytes));
  if (!(options.step_factor > 1.0)) throw InputError("step-factor must be greater than 1");
  if (options.comm.channels && (*options.comm.channels < 1 || *options.comm.channels > kMaxChannels))
    throw InputError("--channels " + std::to_string(*options.comm.channels) + ": expected 0 (as NCCL would) or 1 to " +
                     std::to_string(kMaxChannels));
  // The sizes, counted before any runs: a step factor barely above 1 asks for millions of rows.
  std::vector<sim::Bytes> sizes;
  double size = static_cast<double>(options.min_bytes.count());
  while (size <= static_cast<double>(options.max_bytes.count()) * (1 + 1e-12)) {
    if (sizes.size() == kMaxCollectiveRows)
      throw InputError("--step-factor " + format_number(options.step_factor) + " from " +
                       sim::format_bytes(options.min_bytes) + " to " + sim::format_bytes(options.max_bytes) +
                       " gives more than " + std::to_string(kMaxCollectiveRows) +
                       " sizes; expected a larger factor or a narrower range");
    std::int64_t bytes = static_cast<std::int64_t>(std::llround(size));
    bytes = std::max<std::int64_t>(4, bytes / 4 * 4);  // whole floats, as nccl-tests
    sizes.push_back(sim::Bytes::of(bytes));
    size *= options.step_factor;
  }
  std::vector<CollectiveSweepRow> rows;
  for (const sim::Bytes s : sizes) rows.push_back(run_one_collective(topology, options, s));
  return rows;
}

}  // namespace hybridsim::analysis
