// Pushes one million messages across 3-hop routes under contention and reports message-hops per
// second: S senders (4 or 64), each with its own uplink, all sharing one core link, and pairs of them
// sharing a downlink (sender s -> downlink s/2). Each sender keeps 8 messages in flight and sends the
// next one when one is delivered (closed loop), so the links stay saturated.
//   ./bench_network --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/event_queue.h"
#include "sim/link.h"
#include "sim/network.h"

namespace {

namespace sim = hybridsim::sim;

constexpr std::uint64_t kMessages = 1'000'000;

struct Fabric {
  sim::LinkTable links;
  std::vector<std::array<sim::LinkId, 3>> routes;

  explicit Fabric(int senders) : routes(static_cast<std::size_t>(senders)) {
    std::vector<sim::LinkId> up(routes.size());
    std::vector<sim::LinkId> down(routes.size() / 2);
    for (auto& l : up)
      l = links.add({sim::LinkKind::NVLink, sim::Bandwidth::gb_per_second(50), sim::Time::ns(700), "up"});
    const sim::LinkId core = links.add(
        {sim::LinkKind::InfiniBand, sim::Bandwidth::gb_per_second(100), sim::Time::ns(500), "core"});
    for (auto& l : down)
      l = links.add({sim::LinkKind::NVLink, sim::Bandwidth::gb_per_second(25), sim::Time::ns(700), "down"});
    for (std::size_t s = 0; s < routes.size(); ++s) routes[s] = {up[s], core, down[s / 2]};
  }
};

// Receives every delivery and sends the sender's next message until the budget is spent.
class Driver final : public sim::EventHandler {
 public:
  Driver(sim::Network& net, const Fabric& fabric, sim::Bytes size)
      : net_(net), fabric_(fabric), size_(size) {}
  void start(std::uint64_t messages, int window) {
    remaining_ = messages;
    for (int w = 0; w < window; ++w)
      for (std::uint64_t s = 0; s < fabric_.routes.size(); ++s) on_event(s);
  }
  void on_event(std::uint64_t sender) override {
    if (remaining_ == 0) return;
    --remaining_;
    net_.send(fabric_.routes[sender], size_, *this, sender);
  }

 private:
  sim::Network& net_;
  const Fabric& fabric_;
  sim::Bytes size_;
  std::uint64_t remaining_ = 0;
};

void BM_ThreeHopContention(benchmark::State& state) {
  const Fabric fabric(static_cast<int>(state.range(1)));
  sim::EventQueue queue;
  const auto switching =
      state.range(0) == 0 ? sim::Switching::CutThrough : sim::Switching::StoreAndForward;
  sim::Network net(queue, fabric.links, switching);
  Driver driver(net, fabric, sim::Bytes::kib(64));
  std::uint64_t hops = 0;
  for (auto _ : state) {
    const std::uint64_t before = net.hops_processed();
    driver.start(kMessages, /*window=*/8);
    queue.run();
    hops += net.hops_processed() - before;
  }
  if (hops != 3 * kMessages * state.iterations()) state.SkipWithError("lost message hops");
  state.counters["message_hops_per_second"] =
      benchmark::Counter(static_cast<double>(hops), benchmark::Counter::kIsRate);
  state.SetLabel(switching == sim::Switching::CutThrough ? "cut-through" : "store-and-forward");
}
// Args: {0 = cut-through / 1 = store-and-forward, senders}.
BENCHMARK(BM_ThreeHopContention)
    ->ArgNames({"saf", "senders"})
    ->Args({0, 4})
    ->Args({1, 4})
    ->Args({0, 64})
    ->Unit(benchmark::kMillisecond);

}  // namespace
