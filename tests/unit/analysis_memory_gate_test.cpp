// The shared memory budget of steps built and simulated at once (analysis/step/memory_gate.h): what
// is held together never passes the budget, a piece over it alone still runs (by itself), and a
// budget of 0 holds nothing back.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "analysis/step/memory_gate.h"

using namespace hybridsim;

namespace {

// Runs `sizes` on `threads` threads through the gate; returns the most bytes held at once.
std::int64_t most_held(std::int64_t budget, const std::vector<std::int64_t>& sizes, int threads) {
  analysis::MemoryGate gate(budget);
  std::atomic<std::size_t> next{0};
  std::atomic<std::int64_t> most{0};
  auto loop = [&] {
    for (std::size_t i; (i = next++) < sizes.size();) {
      analysis::MemoryGate::Hold hold(&gate, sizes[i]);
      const std::int64_t now = gate.held();
      std::int64_t seen = most.load();
      while (now > seen && !most.compare_exchange_weak(seen, now)) {
      }
      std::this_thread::yield();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(loop);
  for (auto& t : pool) t.join();
  CHECK(gate.held() == 0);
  return most.load();
}

}  // namespace

TEST_CASE("memory gate: pieces run at once only while their bytes fit the budget together") {
  const std::vector<std::int64_t> sizes(64, 60);  // two never fit in 100 together
  CHECK(most_held(100, sizes, 4) == 60);
  CHECK(most_held(130, sizes, 4) <= 120);
  // Over the budget alone: runs, by itself.
  CHECK(most_held(50, {70, 70, 70, 70}, 3) == 70);
  // No budget: nothing waits (what is held at once is at most the threads' pieces).
  CHECK(most_held(0, sizes, 2) <= 120);
}
