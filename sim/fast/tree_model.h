// sim::run_tree_model — one channel group of a folded tree simulated on a queue and a network of its
// own: a pure function of its input (the shared, read-only plans and link table; bytes, messages,
// timing, join order), so that it may run on another thread. sim::AheadRuns runs such models on
// worker threads ahead of need (sim/README.md, "Trees in a step: the second core").
//   AheadRuns ahead(1);  const auto id = ahead.add(input);  ...  TreeModelRun run = ahead.take(id);
#pragma once
#include <array>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sim/tree_collective.h"

namespace hybridsim::sim {

class ModelProgress;  // sim/model_progress.h

// One group of a tree's channels simulated on a queue and links of its own.
struct TreeModelRun {
  std::vector<std::vector<Time>> done;  // [channel in group][rank]
  std::vector<LinkId> real_link;        // the group's links, each once
  std::vector<LinkCounters> use;        // per link of real_link
  std::vector<Time> busy_until;         // per link of real_link
  std::uint64_t events = 0;
  std::uint64_t messages = 0;
  std::uint64_t most_in_flight = 0;  // on its own network at once
  std::array<Bytes, kLinkKindCount> bytes{};
};

// Everything a model run reads. `links` (a topology's, which outlives the run) and `plans` are
// only read, by any number of runs at once.
struct TreeModelInput {
  const LinkTable* links = nullptr;
  Switching switching = Switching::CutThrough;
  std::uint32_t ranks = 0;
  std::shared_ptr<const std::vector<TreeChannel>> plans;
  CollectiveConfig config;  // the tree's (run with the fast path off, no observer, budget or uniform trees)
  TreeSegment segment;      // the group's channels, their bytes and the tree's messages per channel
  std::vector<std::uint32_t> join_order;
  Time joined;  // every rank joins then
};

TreeModelRun run_tree_model(const TreeModelInput& in);

// Tree models run on `workers` threads in the order added; the owner takes each result when it
// needs it, and runs it itself if no worker has started it (and, while a worker runs it, runs the
// next queued one rather than wait). Results are the same whoever runs them.
class AheadRuns {
 public:
  explicit AheadRuns(unsigned workers);
  AheadRuns(const AheadRuns&) = delete;
  AheadRuns& operator=(const AheadRuns&) = delete;
  ~AheadRuns();  // drops the runs not started and waits for those under way

  std::size_t add(TreeModelInput input);
  // Run `id`'s result, once; rethrows what its run threw. `progress` (null: nobody) is told while
  // this thread waits for a worker's run (sim/model_progress.h).
  TreeModelRun take(std::size_t id, ModelProgress* progress = nullptr);
  // Drops run `id` if no one has started it (true); it cannot be taken then.
  bool drop(std::size_t id);
  // Runs taken that a worker had finished or started (the rest ran on the owner's thread).
  std::uint64_t ahead() const { return ahead_; }

 private:
  enum class State : std::uint8_t { Queued, Running, Done, Taken };
  struct Slot {
    TreeModelInput input;
    State state = State::Queued;
    TreeModelRun result;
    std::exception_ptr error;
  };
  void work();
  static void run(Slot& slot);

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Slot> slots_;  // by id; a deque keeps their addresses as it grows
  std::deque<std::size_t> queued_;
  bool stopping_ = false;
  std::uint64_t ahead_ = 0;
  std::vector<std::thread> workers_;
};

// The threads a folded step's model runs use for `wanted` (SimulationLimits::model_threads): 0 is
// the default, min(2, the machine's hardware threads).
unsigned model_threads(unsigned wanted);

}  // namespace hybridsim::sim
