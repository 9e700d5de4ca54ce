// The classic "hold" model of an event queue, shared by bench_event_queue (the core's rate) and
// bench_full_path (the same rate in the same run as a full step, for their ratio): N events pending,
// each processed event schedules one new event a pre-drawn delay ahead, so the queue stays at N.
#pragma once
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "sim/event_queue.h"

namespace hybridsim::bench {

using sim::EventHandler;
using sim::EventQueue;
using sim::Time;

// 2^16 delays drawn from an exponential distribution with a mean of 1 us (in integer ps), reused
// cyclically: the classic hold model's increment distribution.
inline std::vector<std::int64_t> make_delays() {
  std::mt19937_64 rng(20240611);
  std::exponential_distribution<double> exp(1.0 / 1'000'000.0);
  std::vector<std::int64_t> delays(1 << 16);
  for (auto& d : delays) d = static_cast<std::int64_t>(exp(rng));
  return delays;
}

// Each event reschedules itself one pre-drawn delay ahead.
class Holder final : public EventHandler {
 public:
  Holder(EventQueue& queue, const std::vector<std::int64_t>& delays)
      : queue_(queue), delays_(delays), mask_(delays.size() - 1) {}
  void on_event(std::uint64_t tag) override {
    queue_.schedule_after(Time::ps(delays_[next_++ & mask_]), *this, tag);
  }
  Time next_delay() { return Time::ps(delays_[next_++ & mask_]); }

 private:
  EventQueue& queue_;
  const std::vector<std::int64_t>& delays_;
  std::size_t mask_;
  std::size_t next_ = 0;
};

// The hold model with range(0) events pending and the given delays, on the event queue.
inline void hold(benchmark::State& state, const std::vector<std::int64_t>& delays) {
  const auto n = static_cast<std::size_t>(state.range(0));
  EventQueue queue;
  queue.reserve(n);
  Holder holder(queue, delays);
  for (std::size_t i = 0; i < n; ++i) queue.schedule_after(holder.next_delay(), holder, i);
  // Warm up: let the heap reach its steady-state shape before timing.
  for (std::size_t i = 0; i < 2 * n; ++i) queue.step();
  for (auto _ : state) {
    benchmark::DoNotOptimize(queue.step());
  }
  if (queue.pending() != n) state.SkipWithError("the hold model lost events");
  state.counters["events_per_second"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["pending"] = static_cast<double>(n);
}
}  // namespace hybridsim::bench
