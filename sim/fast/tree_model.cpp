// A folded tree's model runs (sim/fast/tree_model.h): the run itself, which touches only its own
// queue, network and collective, and the worker threads that run them ahead of need. A run charges
// no budget: the budget is the owner's, charged on its thread before it runs a model or first uses
// one run ahead (FoldedTree::charge), so that the charges come in the same order whoever ran it.
#include "sim/fast/tree_model.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "sim/error.h"
#include "sim/fast/rank_starter.h"
#include "sim/model_progress.h"

namespace hybridsim::sim {

TreeModelRun run_tree_model(const TreeModelInput& in) {
  // The model shares the tree's plans and runs over a network of every link, of which only the
  // group's carry anything: no plan is copied, no link renumbered. Its use is read off the group's
  // links, each once, in the order they are first used.
  TreeModelRun out;
  std::vector<std::uint8_t> seen(in.links->size(), 0);
  auto note = [&](const std::vector<LinkId>& route) {
    for (const LinkId l : route)
      if (seen[l] == 0) {
        seen[l] = 1;
        out.real_link.push_back(l);
      }
  };
  for (const std::uint32_t c : in.segment.channels) {
    const TreeChannel& t = (*in.plans)[c];
    for (std::uint32_t r = 0; r < in.ranks; ++r) {
      note(t.up[r]);
      for (const auto& route : t.down[r]) note(route);
    }
  }
  EventQueue queue;
  Network network(queue, *in.links, in.switching);
  CollectiveConfig config = in.config;
  config.fast_path = FastPath::Off;
  config.observer = nullptr;
  config.uniform_trees = nullptr;
  config.budget = nullptr;  // the owner charges its budget before the run (FoldedTree::charge)
  TreeCollective model(network, in.ranks, in.plans, Bytes::of(0), config, in.segment);
  RankStarter starter(model);
  for (const std::uint32_t r : in.join_order) queue.schedule_at(in.joined, starter, r);
  run_counted(queue, config.model_progress);  // counted from any thread, told on the owner's only
  if (!model.is_done()) throw InternalError("a folded tree's model did not finish");
  const std::size_t group = in.segment.channels.size();
  out.done.resize(group);
  for (std::uint32_t i = 0; i < group; ++i)
    for (std::uint32_t r = 0; r < in.ranks; ++r) out.done[i].push_back(model.node_done(i, r));
  for (const LinkId l : out.real_link) {
    out.use.push_back(network.counters(l));
    out.busy_until.push_back(network.busy_until(l));
  }
  out.events = queue.events_processed() - in.ranks;  // the starters stand for the real ranks' joins
  out.messages = model.messages_sent();
  out.most_in_flight = network.most_messages_in_flight();
  out.bytes = model.bytes_by_link_kind();
  return out;
}

AheadRuns::AheadRuns(unsigned workers) {
  for (unsigned w = 0; w < workers; ++w) workers_.emplace_back([this] { work(); });
}

AheadRuns::~AheadRuns() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
    queued_.clear();
  }
  changed_.notify_all();
  for (std::thread& t : workers_) t.join();
}

std::size_t AheadRuns::add(TreeModelInput input) {
  // A run queued for another tree than the one that queues it must be that tree's: its join order a
  // permutation of its own ranks, its plans of as many ranks. Checked here, on the owner's thread,
  // because a worker would start ranks the tree does not have (a Mixtral slice crashed so).
  std::vector<std::uint8_t> named(input.ranks, 0);
  bool fits = input.join_order.size() == input.ranks;
  for (const std::uint32_t r : input.join_order)
    fits = fits && r < input.ranks && std::exchange(named[r], 1) == 0;
  for (const std::uint32_t c : input.segment.channels)
    fits = fits && c < input.plans->size() && (*input.plans)[c].parent.size() == input.ranks;
  if (!fits) throw InternalError("a tree model run queued ahead does not fit its tree's ranks");
  std::size_t id = 0;
  {
    const std::lock_guard lock(mutex_);
    id = slots_.size();
    slots_.emplace_back().input = std::move(input);
    queued_.push_back(id);
  }
  changed_.notify_all();
  return id;
}

void AheadRuns::run(Slot& slot) {
  try {
    slot.result = run_tree_model(slot.input);
  } catch (...) {
    slot.error = std::current_exception();
  }
  slot.input = {};  // its join order and plans are no longer needed
}

void AheadRuns::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !queued_.empty(); });
    if (stopping_) return;
    Slot& slot = slots_[queued_.front()];
    queued_.pop_front();
    slot.state = State::Running;
    lock.unlock();
    run(slot);  // touches only this slot, which no one else reads until it is Done
    lock.lock();
    slot.state = State::Done;
    changed_.notify_all();
  }
}

TreeModelRun AheadRuns::take(std::size_t id, ModelProgress* progress) {
  std::unique_lock lock(mutex_);
  Slot& slot = slots_.at(id);
  if (slot.state == State::Taken) throw InternalError("a tree model run taken twice");
  if (slot.state == State::Queued) {
    queued_.erase(std::find(queued_.begin(), queued_.end(), id));
    slot.state = State::Running;
    lock.unlock();
    run(slot);
    lock.lock();
  } else {
    ++ahead_;
    // While a worker runs it, this thread runs the next queued run (one the trees will need later)
    // rather than wait idle.
    while (slot.state != State::Done) {
      if (queued_.empty()) {
        const auto ready = [&] { return slot.state == State::Done || !queued_.empty(); };
        if (progress == nullptr) {
          changed_.wait(lock, ready);
          continue;
        }
        // Told every tenth of a second while it waits, of the worker's events so far: the step's
        // progress lines go on (ModelProgress::waiting, on this thread, unlocked).
        if (changed_.wait_for(lock, std::chrono::milliseconds(100), ready)) continue;
        lock.unlock();
        progress->waiting();
        lock.lock();
        continue;
      }
      Slot& other = slots_[queued_.front()];
      queued_.pop_front();
      other.state = State::Running;
      lock.unlock();
      run(other);
      lock.lock();
      other.state = State::Done;
      // A tick of this thread threw inside that run (Ctrl-C in the Python module): run() kept it as
      // that run's error, so the step stops now with it, not later with the ModelRunStopped that the
      // worker's run then throws (which reached Python as a RuntimeError).
      if (other.error && progress != nullptr && progress->stopped()) {
        other.state = State::Taken;
        std::rethrow_exception(std::exchange(other.error, nullptr));
      }
    }
  }
  slot.state = State::Taken;
  if (slot.error) std::rethrow_exception(std::exchange(slot.error, nullptr));
  return std::exchange(slot.result, {});
}

bool AheadRuns::drop(std::size_t id) {
  const std::lock_guard lock(mutex_);
  Slot& slot = slots_.at(id);
  if (slot.state != State::Queued) return false;
  queued_.erase(std::find(queued_.begin(), queued_.end(), id));
  slot.state = State::Taken;
  slot.input = {};
  return true;
}

unsigned model_threads(unsigned wanted) {
  // Two where the machine has them: the runs ahead take the trees' models off the simulation's
  // thread (sim/README.md, "Trees in a step: the second core"). A Mixtral slice's crash with two
  // (runs queued for trees of another size) is fixed in FoldedTree::run_ahead, refused in
  // AheadRuns::add and covered by tests/unit/sim_tree_ahead_test.cpp's trees of two sizes.
  if (wanted > 0) return wanted;
  return std::clamp(std::thread::hardware_concurrency(), 1u, 2u);
}

}  // namespace hybridsim::sim
