// The classic "hold" benchmark of an event queue: N events are pending; each processed event schedules
// one new event a random delay ahead, so the queue stays at N. Reports events processed per second.
//   ./bench_event_queue --benchmark_repetitions=5 --benchmark_filter='Hold'
// BM_HoldOtherDelays* run it under uniform, bimodal and many-equal-times delays.
// The random delays are generated once, before timing, so the RNG is not measured.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <queue>
#include <random>
#include <vector>

#include "sim/event_queue.h"
#include "tests/bench/hold_model.h"

namespace {

using hybridsim::bench::hold;
using hybridsim::bench::make_delays;
using hybridsim::sim::EventHandler;
using hybridsim::sim::EventQueue;
using hybridsim::sim::Time;

// Other increment distributions, to show the queue does not depend on the exponential one:
// 0: uniform in [0, 2 us); 1: bimodal, 90% uniform in [0, 10 ns) and 10% uniform in [10, 20 us);
// 2: many equal times, whole microseconds from 1 to 4 (so about 2.5 x 10^4 events share each time
// at N = 10^5).
std::vector<std::int64_t> make_delays(int kind) {
  std::mt19937_64 rng(20240612 + static_cast<std::uint64_t>(kind));
  std::vector<std::int64_t> delays(1 << 16);
  for (auto& d : delays) {
    const auto r = static_cast<std::int64_t>(rng() >> 1);
    if (kind == 0) d = r % 2'000'000;
    else if (kind == 1) d = r % 10 == 0 ? 10'000'000 + r / 10 % 10'000'000 : r / 10 % 10'000;
    else d = (1 + r % 4) * 1'000'000;
  }
  return delays;
}

void BM_Hold(benchmark::State& state) { hold(state, make_delays()); }
BENCHMARK(BM_Hold)->Arg(1'000)->Arg(100'000)->Arg(1'000'000);

// The baseline the event core is measured against, in the same run: a plain std::priority_queue of
// (time, sequence, handler) entries, the textbook event list, driving the same hold model.
class PlainQueue;
class PlainHandler {
 public:
  virtual void on_event() = 0;

 protected:
  ~PlainHandler() = default;
};
class PlainQueue {
 public:
  void schedule_after(std::int64_t delay, PlainHandler& handler) {
    heap_.push(Entry{now_ + delay, sequence_++, &handler});
  }
  bool step() {
    if (heap_.empty()) return false;
    const Entry e = heap_.top();
    heap_.pop();
    now_ = e.time;
    e.handler->on_event();
    return true;
  }
  std::size_t pending() const { return heap_.size(); }

 private:
  struct Entry {
    std::int64_t time;
    std::uint64_t sequence;
    PlainHandler* handler;
  };
  struct Later {  // the earliest (time, then sequence) on top
    bool operator()(const Entry& a, const Entry& b) const {
      return a.time != b.time ? a.time > b.time : a.sequence > b.sequence;
    }
  };
  std::priority_queue<Entry, std::vector<Entry>, Later> heap_;
  std::int64_t now_ = 0;
  std::uint64_t sequence_ = 0;
};
class PlainHolder final : public PlainHandler {
 public:
  PlainHolder(PlainQueue& queue, const std::vector<std::int64_t>& delays)
      : queue_(queue), delays_(delays), mask_(delays.size() - 1) {}
  void on_event() override { queue_.schedule_after(next_delay(), *this); }
  std::int64_t next_delay() { return delays_[next_++ & mask_]; }

 private:
  PlainQueue& queue_;
  const std::vector<std::int64_t>& delays_;
  std::size_t mask_;
  std::size_t next_ = 0;
};

// The same hold model on the plain std::priority_queue.
void plain_hold(benchmark::State& state, const std::vector<std::int64_t>& delays) {
  const auto n = static_cast<std::size_t>(state.range(0));
  PlainQueue queue;
  PlainHolder holder(queue, delays);
  for (std::size_t i = 0; i < n; ++i) queue.schedule_after(holder.next_delay(), holder);
  for (std::size_t i = 0; i < 2 * n; ++i) queue.step();
  for (auto _ : state) {
    benchmark::DoNotOptimize(queue.step());
  }
  if (queue.pending() != n) state.SkipWithError("the hold model lost events");
  state.counters["events_per_second"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["pending"] = static_cast<double>(n);
}
void BM_HoldStdPriorityQueue(benchmark::State& state) { plain_hold(state, make_delays()); }
BENCHMARK(BM_HoldStdPriorityQueue)->Arg(1'000)->Arg(100'000)->Arg(1'000'000);

// The same with one event in four cancelled and replaced (a timer being reset): exercises the
// cancelled-entry path that collectives with timeouts would take.
class CancellingHolder final : public EventHandler {
 public:
  CancellingHolder(EventQueue& queue, const std::vector<std::int64_t>& delays, std::size_t n)
      : queue_(queue), delays_(delays), mask_(delays.size() - 1), ids_(n) {}
  void start() {
    for (std::size_t i = 0; i < ids_.size(); ++i)
      ids_[i] = queue_.schedule_after(next_delay(), *this, i);
  }
  void on_event(std::uint64_t tag) override {
    ids_[tag] = queue_.schedule_after(next_delay(), *this, tag);
    if ((++count_ & 3) == 0) {  // reset another event's timer
      const std::size_t victim = (tag * 0x9E3779B97F4A7C15ULL >> 7) % ids_.size();
      if (queue_.cancel(ids_[victim])) ids_[victim] = queue_.schedule_after(next_delay(), *this, victim);
    }
  }

 private:
  Time next_delay() { return Time::ps(delays_[next_++ & mask_]); }
  EventQueue& queue_;
  const std::vector<std::int64_t>& delays_;
  std::size_t mask_;
  std::size_t next_ = 0;
  std::uint64_t count_ = 0;
  std::vector<hybridsim::sim::EventId> ids_;
};

void BM_HoldWithCancel(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const std::vector<std::int64_t> delays = make_delays();
  EventQueue queue;
  queue.reserve(n);
  CancellingHolder holder(queue, delays, n);
  holder.start();
  for (std::size_t i = 0; i < 2 * n; ++i) queue.step();
  for (auto _ : state) {
    benchmark::DoNotOptimize(queue.step());
  }
  state.counters["events_per_second"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_HoldWithCancel)->Arg(100'000);

// The hold model at N = 10^5 under the other delay distributions (the second argument, see
// make_delays(int)), for the event queue and for the plain std::priority_queue.
void BM_HoldOtherDelays(benchmark::State& state) {
  hold(state, make_delays(static_cast<int>(state.range(1))));
}
BENCHMARK(BM_HoldOtherDelays)->Args({100'000, 0})->Args({100'000, 1})->Args({100'000, 2});
void BM_HoldOtherDelaysStdPriorityQueue(benchmark::State& state) {
  plain_hold(state, make_delays(static_cast<int>(state.range(1))));
}
BENCHMARK(BM_HoldOtherDelaysStdPriorityQueue)->Args({100'000, 0})->Args({100'000, 1})->Args({100'000, 2});

}  // namespace
