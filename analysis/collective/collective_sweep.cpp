#include "analysis/collective/collective_sweep.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "analysis/output/progress_estimate.h"
#include "analysis/step/budget_error.h"
#include "analysis/step/step_progress.h"
#include "sim/collective_chain.h"
#include "sim/collectives/all_to_all.h"
#include "sim/error.h"
#include "sim/fast/link_claims.h"
#include "sim/ring_collective.h"
#include "topology/gpu_list.h"

namespace hybridsim::analysis {

namespace {

// Refuses a protocol other than auto, ideal and `allowed`, and any channel count, for a collective
// that runs without them, in the words given.
void refuse_protocol_and_channels(const CollectiveSweepOptions& options, std::optional<sim::Protocol> allowed,
                                  const std::string& protocol_why, const std::string& channels_why) {
  const auto p = options.comm.protocol;
  const CollectiveOptionNames& n = options.names;
  if (p && *p != sim::Protocol::Ideal && p != allowed)
    throw InputError(n.protocol_at + n.said(n.protocol, workloads::protocol_option_name(p)) + ": " +
                     protocol_why);
  if (options.comm.channels)
    throw InputError(n.said_number(n.channels, std::to_string(*options.comm.channels)) + ": " + channels_why);
}

// The tree and hierarchical algorithms are all-reduces; the planner runs every other op as a
// ring (all-to-all as direct sends), so asking for them there would silently do something else.
void check_algorithm(const topology::Topology& t, const CollectiveSweepOptions& options) {
  const auto a = options.comm.algorithm;
  const CollectiveOptionNames& n = options.names;
  if ((a == workloads::AllReduceAlgorithm::Tree || a == workloads::AllReduceAlgorithm::Hierarchical) &&
      options.op != sim::CollectiveOp::AllReduce)
    throw InputError(n.algorithm_at + n.said(n.algorithm, workloads::algorithm_name(a)) +
                     " applies only to all-reduce (" + n.said(n.op, "allreduce") + "), not to " +
                     std::string(sim::collective_op_name(options.op)) +
                     "; broadcast, all-gather and reduce-scatter run as rings, all-to-all as direct sends (" +
                     (options.op == sim::CollectiveOp::AllToAll ? std::string("auto")
                                                                : n.said(n.algorithm, "ring") + " or auto") +
                     ")");
  // An all-to-all sends directly between every pair: a ring asked for ran as those sends, its rows
  // "point-to-point" under the title's "auto", without a word.
  if (a == workloads::AllReduceAlgorithm::Ring && options.op == sim::CollectiveOp::AllToAll)
    throw InputError(n.algorithm_at + n.said(n.algorithm, "ring") +
                     ": all-to-all runs as direct sends between every pair of GPUs, not as a ring; expected "
                     "auto (or the option left out)");
  // The hierarchical all-reduce needs the same number (2 or more) of GPUs on each of two machines
  // or more: otherwise the planner runs the ring, under the label asked for.
  const std::string unfit = a == workloads::AllReduceAlgorithm::Hierarchical
                                ? workloads::hierarchical_unfit(t, options.gpus)
                                : std::string();
  if (!unfit.empty())
    throw InputError(n.algorithm_at + n.said(n.algorithm, "hierarchical") + ": GPUs " +
                     topology::format_gpu_list(options.gpus) + " are " + unfit +
                     ", where it runs as the ring (it is a ring within each machine, then one across "
                     "machines); expected GPUs on two machines or more, the same number (2 or more) on "
                     "each (" +
                     n.said_number(n.nodes, "N > 1") + "), or " + n.said(n.algorithm, "ring"));
  // A broadcast between two GPUs is a point-to-point copy at the links' line rate, on one stream
  // (workloads/comm/comm_plan.cpp, as a model-parallel copy): a protocol or channel count changed
  // the title only (rows said "ideal", 1 channel).
  if (options.op == sim::CollectiveOp::Broadcast && options.gpus.size() == 2)
    refuse_protocol_and_channels(
        options, std::nullopt,
        "a broadcast between 2 GPUs runs as a point-to-point copy at the links' line rate, not over NCCL's "
        "protocols; expected auto or ideal, or 3 GPUs or more (" +
            n.gpus + ")",
        "a broadcast between 2 GPUs runs as a point-to-point copy on one stream, not over channels; "
        "expected it left out (or 0), or 3 GPUs or more (" +
            n.gpus + ")");
  // All-to-all runs as direct sends between every pair (workloads/comm/comm_plan.cpp), with NCCL's
  // Simple protocol or the ideal one: a channel count or an LL protocol changed nothing but the label.
  if (options.op == sim::CollectiveOp::AllToAll)
    refuse_protocol_and_channels(
        options, sim::Protocol::Simple,
        "all-to-all runs as direct sends under NCCL's Simple protocol; expected auto, simple or ideal",
        "all-to-all runs as direct sends between every pair of GPUs, not over channels (its time does not "
        "depend on them); expected it left out (or 0)");
}

// --protocol ll128 where NCCL disables LL128 (no NVLink inside the machine): the rows ran Simple
// under the title's ll128 (CommPlanner::ll128_refusal).
void check_ll128(workloads::CommPlanner& planner, const CollectiveSweepOptions& options) {
  const std::string why = planner.ll128_refusal(options.gpus, options.op);
  const CollectiveOptionNames& n = options.names;
  if (!why.empty()) throw InputError(n.protocol_at + n.said(n.protocol, "ll128") + ": " + why);
}

// Records the collective's state in `budget` and checks what is sure to be simulated in full
// (all of it, unless it may fold: then it is checked as it starts).
// Returns the events the collective takes in full.
std::uint64_t check_up_front(sim::SimulationBudget& budget, const sim::Collective& coll) {
  sim::SimulationCost cost = coll.full_cost();
  budget.record(0, cost.state_bytes);
  cost.state_bytes = 0;
  if (!coll.may_fold()) budget.check(cost);
  return cost.events;
}

std::string collective_name(const CollectiveSweepOptions& options, sim::Bytes size) {
  return "the " + std::string(sim::collective_op_name(options.op)) + " of " + sim::format_bytes(size) +
         " over " + std::to_string(options.gpus.size()) + " GPUs";
}

// The collective's caps and fast path, in the words of its request (the command line's, Python's).
BudgetKnobs budget_knobs(const CollectiveOptionNames& n) {
  const bool py = n.python;
  // Validate names its case file's keys with ": ", but its caps are still options (--max-events N).
  return {n.max_events, n.takes(n.max_events, "N"), n.max_sim_memory,
          n.takes(n.max_sim_memory, py ? "'SIZE'" : "SIZE"),
          "use " + n.takes(n.fast_path, py ? "'auto'" : "auto")};
}

[[noreturn]] void over_budget(const sim::BudgetExceeded& e, const CollectiveSweepOptions& options,
                              sim::Bytes size, bool fast_path_off) {
  throw budget_refusal("", e, collective_name(options, size), budget_knobs(options.names), fast_path_off);
}

// The same, with the figure that passes whichever way the size runs: the collective in full (the
// estimate itself where it cannot fold), so that the refusal says what to raise the cap to, as run's
// do ("raise it to 38 kB or more"); it said "raise it" alone.
[[noreturn]] void over_budget(sim::BudgetExceeded e, const CollectiveSweepOptions& options, sim::Bytes size,
                              const sim::Collective& coll) {
  const sim::SimulationCost full = coll.full_cost();
  const std::uint64_t in_full = e.kind == sim::BudgetExceeded::Kind::Events
                                    ? full.events
                                    : static_cast<std::uint64_t>(full.memory());
  e.upper = std::max({e.upper, e.estimate, in_full});
  over_budget(e, options, size, options.collective.fast_path == sim::FastPath::Off);
}

workloads::CollectiveSpec spec_of(const CollectiveSweepOptions& options, sim::Bytes size) {
  workloads::CollectiveSpec spec;
  spec.op = options.op;
  spec.size = size;
  spec.members = options.gpus;
  return spec;
}

// An all-to-all's least cost, checked before the planner finds its routes between every pair (n ×
// (n − 1) of them): at 65,536 GPUs their table alone took 17 GB and the kernel's OOM killer ended the
// command without a line; at 16,384, "out of memory" after 6 GB. An all-to-all never folds.
void check_least_cost(const CollectiveSweepOptions& options, sim::Bytes size) {
  if (options.op != sim::CollectiveOp::AllToAll) return;
  const sim::SimulationBudget budget(options.limits);
  try {
    budget.check(sim::AllToAllCollective::least_cost(static_cast<std::uint32_t>(options.gpus.size()), size,
                                                     options.collective.message_size));
  } catch (const sim::BudgetExceeded& e) {
    over_budget(e, options, size, false);
  }
}

// The planner's set-up (an all-to-all's routes between every pair: minutes at 4,096 GPUs of DGX-1;
// the rings' search at 65,536), before any size is weighed, as lines with the time left at the part's
// own rate.
class SetupLines final : public sim::WorkProgress {
 public:
  SetupLines(std::ostream* out, ProgressClock clock, double since)
      : out_(out), clock_(std::move(clock)), since_(since) {}
  void built(std::string_view part, std::uint64_t done, std::uint64_t total, std::string_view unit) override {
    if (!line_ || done == 0 || part != part_) {
      part_ = part;
      line_.emplace(
          out_, "collective", static_cast<double>(total), std::string(unit), clock_,
          ProgressTiming{.since = since_, .until = "the set-up is done, the sizes not yet counted"});
    }
    line_->advance(static_cast<double>(done), part_);
  }

 private:
  std::ostream* out_;
  ProgressClock clock_;
  double since_;
  std::string part_;
  std::optional<ProgressEstimate> line_;
};

// Returns the events the size would take simulated in full (its weight in the progress lines).
std::uint64_t check_budget_with(workloads::CommPlanner& planner, const topology::Topology& topology,
                                const CollectiveSweepOptions& options, sim::Bytes size) {
  const workloads::CollectiveSpec spec = spec_of(options, size);
  sim::EventQueue queue;
  sim::Network network(queue, topology.links());
  const std::unique_ptr<sim::Collective> coll =
      workloads::make_collective(network, planner.plan(spec), options.collective);
  sim::SimulationBudget budget(options.limits);
  try {
    check_up_front(budget, *coll);
  } catch (const sim::BudgetExceeded& e) {
    over_budget(e, options, size, *coll);
  }
  return std::max<std::uint64_t>(1, coll->full_cost().events);
}

}  // namespace

CollectiveOptionNames CollectiveOptionNames::for_language(const OptionSpelling& spelling) {
  CollectiveOptionNames n;
  if (!spelling.is_python()) return n;
  // Each default is the command line's "--name": the same option in Python's words.
  for (std::string* name : {&n.algorithm, &n.protocol, &n.op, &n.gpus, &n.nodes, &n.channels, &n.min_bytes,
                            &n.max_bytes, &n.step_factor, &n.message_size, &n.reduction, &n.fast_path,
                            &n.max_events, &n.max_sim_memory})
    *name = spelling.name(std::string_view(*name).substr(2));
  n.separator = "=";
  n.python = true;
  return n;
}

std::string too_few_gpus(std::size_t gpus, bool listed, const CollectiveOptionNames& names) {
  if (gpus >= 2) return {};
  return std::to_string(gpus) + " GPU" + (gpus == 1 ? "" : "s") + "; a collective needs at least 2 GPUs" +
         (listed ? ", such as " + names.said(names.gpus, "0-1") : "");
}

void fill_row(CollectiveSweepRow& row, const sim::Collective& coll, sim::Bytes size,
              const CollectiveSweepOptions& options);

namespace {

// One size's events as they run, passed on to the sweep's progress (`progress`) as its weight's
// share: at 1,024 GPUs in full a gibibyte's all-reduce alone runs for seconds.
class SizeTicks final : public SimulationProgress {
 public:
  SizeTicks(ProgressEstimate& progress, double before, double weight, std::string what)
      : SimulationProgress(std::chrono::seconds(0), std::chrono::seconds(0)),
        progress_(progress),
        before_(before),
        weight_(weight),
        what_(std::move(what)) {}

 protected:
  void report(const SimulationProgressReport& r) override {
    progress_.advance(before_ + std::min(static_cast<double>(r.events), weight_), what_);
  }

 private:
  ProgressEstimate& progress_;
  double before_;
  double weight_;
  std::string what_;
};

// `ticks` (null: none) hears of the events every SimulationProgress::kTickEvents.
CollectiveSweepRow run_one_with(workloads::CommPlanner& planner, const topology::Topology& topology,
                                const CollectiveSweepOptions& options, sim::Bytes size,
                                SimulationProgress* ticks = nullptr) {
  workloads::CollectivePlan plan = planner.plan(spec_of(options, size));
  CollectiveSweepRow row;
  row.op = options.op;
  row.algorithm = plan.algorithm;
  row.protocol = plan.protocol;
  // An all-to-all's plan keeps the ring count for the SMs its copies take in a step; its sends
  // use no channel (check_algorithm refuses --channels for it).
  row.channels = plan.pairs != nullptr ? 0 : plan.channels;
  row.nccl = plan.nccl;
  sim::CollectiveConfig config = options.collective;
  for (;;) {
    sim::EventQueue queue;
    sim::Network network(queue, topology.links());
    sim::SimulationBudget budget(options.limits);
    config.budget = &budget;
    // A folded collective's models run on queues of their own as it starts (at 65,536 GPUs of DGX-1
    // a small size's folded trees ran 8 to 40 s without a line): their events are told as well.
    StepTicks size_ticks(queue, ticks, {});
    config.model_progress = size_ticks.for_models();
    std::unique_ptr<sim::Collective> coll = workloads::make_collective(network, plan, config);
    try {
      // Its ticks' share is of its events in full (a folded one runs fewer: its lines end early).
      size_ticks.set_expected(check_up_front(budget, *coll));
      coll->start_all();
      size_ticks.run();
    } catch (const sim::BudgetExceeded& e) {
      over_budget(e, options, size, *coll);
    }
    if (!coll->is_done()) throw InternalError("collective did not finish");
    if (sim::interfered(network) && config.fast_path != sim::FastPath::Off) {
      // Rings of a hierarchical chain crossed each other's links while one was folded.
      config.fast_path = sim::FastPath::Off;
      row.rerun = true;
      continue;
    }
    fill_row(row, *coll, size, options);
    row.events = queue.events_processed() + coll->simulation_path().private_events;
    return row;
  }
}

}  // namespace

CollectiveSweepRow run_one_collective(const topology::Topology& topology,
                                      const CollectiveSweepOptions& options, sim::Bytes size,
                                      SimulationProgress* ticks) {
  check_algorithm(topology, options);
  check_least_cost(options, size);
  workloads::CommPlanner planner(topology, options.comm);
  check_ll128(planner, options);
  return run_one_with(planner, topology, options, size, ticks);
}

void fill_row(CollectiveSweepRow& row, const sim::Collective& coll, sim::Bytes size,
              const CollectiveSweepOptions& options) {
  const auto n = static_cast<std::uint32_t>(options.gpus.size());
  row.size = size;
  row.count = nccl_tests_count(options.op, size, static_cast<int>(n));
  row.time = coll.finish_time();
  const double seconds = row.time.to_seconds();
  row.algbw_gb_per_s = seconds > 0 ? static_cast<double>(size.count()) / seconds * 1e-9 : 0;
  row.busbw_gb_per_s = row.algbw_gb_per_s * sim::bus_factor(options.op, static_cast<int>(n));
  row.messages = coll.messages_sent();
  row.bytes_by_link_kind = coll.bytes_by_link_kind();
  row.path = coll.simulation_path();
}

std::string row_algorithm_name(const CollectiveSweepRow& row) {
  if (row.op == sim::CollectiveOp::AllToAll) return "point-to-point";
  return std::string(workloads::algorithm_name(row.algorithm));
}

std::vector<CollectiveSweepRow> run_collective_sweep(const topology::Topology& topology,
                                                     const CollectiveSweepOptions& options) {
  if (options.gpus.size() < 2) throw InputError("a collective needs at least 2 GPUs");
  check_algorithm(topology, options);
  const CollectiveOptionNames& n = options.names;
  if (options.comm.channels && (*options.comm.channels < 1 || *options.comm.channels > kMaxChannels))
    throw InputError(n.said_number(n.channels, std::to_string(*options.comm.channels)) +
                     ": expected 0 (as NCCL would) or 1 to " + std::to_string(kMaxChannels));
  const std::vector<sim::Bytes> sizes = collective_sizes(options).sizes;
  const double start = options.clock();
  for (const sim::Bytes s : sizes) check_least_cost(options, s);
  // Every size's cost before the first runs: none fails after others took minutes.
  // One planner for all: it keeps the rings and trees it found for these GPUs.
  workloads::CommPlanner planner(topology, options.comm);
  SetupLines setup(options.progress, options.clock, start);
  if (options.progress != nullptr) planner.set_progress(&setup);
  check_ll128(planner, options);
  // Weighing a size sets its collective up over every GPU (a few tenths of a second at 65,536): told
  // as sizes weighed, with the set-up's lines of the first, and once a size is weighed with the
  // simulation after, so that they give the command's end (issue 31: at 65,536 GPUs of DGX-1 the 26
  // sizes took 6 to 10 s to weigh, whose lines said "their simulation not yet counted").
  ProgressEstimate weighing(
      options.progress, "collective", static_cast<double>(sizes.size()), "sizes weighed", options.clock,
      {.since = start, .until = "every size is weighed, their simulation not yet counted"});
  std::vector<std::uint64_t> weight;
  double weighed = 0;
  for (const sim::Bytes s : sizes) {
    weight.push_back(check_budget_with(planner, topology, options, s));
    weighed += static_cast<double>(weight.back());
    // Each size left is taken at the last one's events (sizes grow, and a larger one mostly sends no
    // fewer messages: revised as each is weighed), at sim::kEventsPerSecond as the run's estimate
    // counts them.
    const double after =
        weighed + static_cast<double>(weight.back()) * static_cast<double>(sizes.size() - weight.size());
    auto [seconds, how] = simulation_after(after, weight.size(), sizes.size(), "sizes weighed");
    weighing.set_after(seconds, std::move(how));
    weighing.advance(static_cast<double>(weight.size()), "the last " + sim::format_bytes(s));
  }
  planner.set_progress(nullptr);
  double total = 0, done = 0;
  for (const std::uint64_t w : weight) total += static_cast<double>(w);
  ProgressEstimate progress(options.progress, "collective", total, "events in full", options.clock,
                            {.since = start});
  std::vector<CollectiveSweepRow> rows;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    SizeTicks ticks(progress, done, static_cast<double>(weight[i]),
                    std::to_string(i) + " of " + std::to_string(sizes.size()) + " sizes done, running " +
                        sim::format_bytes(sizes[i]));
    rows.push_back(run_one_with(planner, topology, options, sizes[i], options.progress ? &ticks : nullptr));
    done += static_cast<double>(weight[i]);
    progress.advance(done, std::to_string(i + 1) + " of " + std::to_string(sizes.size()) +
                               " sizes done, the last " + sim::format_bytes(sizes[i]));
  }
  return rows;
}

}  // namespace hybridsim::analysis
