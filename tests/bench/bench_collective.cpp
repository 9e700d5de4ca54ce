// All-reduce of 1 GiB over 1024 GPUs on an idealized 50 GB/s ring with 256 KiB messages: about
// 8.4 million message transfers. Target: under 2 s wall and under 200 MB peak memory.
// The same all-reduce as a tree (a binary heap of the ranks over 50 GB/s links): 4096 messages up
// and down each of the 1023 edges, again about 8.4 million.
// Folded (sim/README.md, "Folding"; the second argument 0: fast path auto, 1: off) the ring's
// 1,024 or 16,384 identical positions are one simulated position.
// Peak memory: run with `/usr/bin/time -v build/tests/bench_collective` (Maximum resident set size).
#include <benchmark/benchmark.h>

#include <memory>

#include "sim/fast/fast_path.h"
#include "sim/ring_collective.h"
#include "sim/tree_collective.h"
#include "tests/unit/binary_tree_channel.h"

using namespace hybridsim::sim;

namespace {

void report(benchmark::State& state, std::uint64_t messages, double simulated_seconds) {
  state.counters["messages"] = static_cast<double>(messages);
  state.counters["simulated_ms"] = simulated_seconds * 1e3;
  state.counters["messages_per_second"] = benchmark::Counter(
      static_cast<double>(messages) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
}

void BM_RingAllReduce(benchmark::State& state) {
  const auto n = static_cast<std::uint32_t>(state.range(0));
  const Bytes size = Bytes::gib(1);
  LinkTable links;
  for (std::uint32_t g = 0; g < n; ++g)
    links.add({LinkKind::Generic, Bandwidth::gb_per_second(50), Time::ns(500), "ring"});
  RingChannel channel;
  for (std::uint32_t p = 0; p < n; ++p) {
    channel.order.push_back(p);
    channel.routes.push_back({p});
  }
  CollectiveConfig config;
  config.message_size = Bytes::kib(256);
  config.fast_path = state.range(1) == 0 ? FastPath::Auto : FastPath::Off;
  std::uint64_t messages = 0;
  double simulated_seconds = 0;
  for (auto _ : state) {
    EventQueue queue;
    Network network(queue, links);
    const std::unique_ptr<Collective> coll =
        make_ring_collective(network, CollectiveOp::AllReduce, n, {channel}, size, config);
    coll->start_all();
    queue.run();
    messages = coll->messages_sent();
    simulated_seconds = coll->finish_time().to_seconds();
    if (state.range(1) == 0 && !coll->simulation_path().folded) state.SkipWithError("the ring did not fold");
  }
  report(state, messages, simulated_seconds);
}
BENCHMARK(BM_RingAllReduce)
    ->Args({8, 1})
    ->Args({1024, 1})
    ->Args({8, 0})
    ->Args({1024, 0})
    ->Args({16384, 0})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

void BM_TreeAllReduce(benchmark::State& state) {
  const auto n = static_cast<std::uint32_t>(state.range(0));
  LinkTable links;
  const TreeChannel tree = hybridsim::testing::binary_tree_channel(
      links, n, {LinkKind::Generic, Bandwidth::gb_per_second(50), Time::ns(500), "up"},
      {LinkKind::Generic, Bandwidth::gb_per_second(50), Time::ns(500), "down"});
  CollectiveConfig config;
  config.message_size = Bytes::kib(256);
  std::uint64_t messages = 0;
  double simulated_seconds = 0;
  for (auto _ : state) {
    EventQueue queue;
    Network network(queue, links);
    TreeCollective coll(network, n, {tree}, Bytes::gib(1), config);
    coll.start_all();
    queue.run();
    messages = coll.messages_sent();
    simulated_seconds = coll.finish_time().to_seconds();
  }
  report(state, messages, simulated_seconds);
}
BENCHMARK(BM_TreeAllReduce)->Arg(8)->Arg(1024)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
