// The shared memory budget of steps built and simulated at once (analysis/step/memory_gate.h): what
// is held together never passes the budget, a piece over it alone still runs (by itself), and a
// budget of 0 holds nothing back.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "analysis/step/memory_gate.h"
#include "sim/error.h"

using namespace hybridsim;

namespace {

// Runs `sizes` on `threads` threads through the gate, `beside` bytes held beside them
// (MemoryGate::hold_beside); returns the most bytes the pieces held at once.
std::int64_t most_held(std::int64_t budget, const std::vector<std::int64_t>& sizes, int threads,
                       std::int64_t beside = 0) {
  analysis::MemoryGate gate(budget);
  gate.hold_beside(beside);
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

TEST_CASE("memory gate: what the process holds beside the pieces shares their budget") {
  // `plan -m gnmt --gpus 16384`: its resolved cluster, cached routes and settings (0.17-0.45 GB) were
  // held beside steps holding up to the whole 4 GiB, and the process reached 5.0 GB (plan16k5).
  const std::vector<std::int64_t> sizes(64, 30);
  // Two fit in 100 beside nothing: a second thread's 30 is let in beside a held 30 at once. (A pool's
  // most held at once, >= 60, failed 1 in 960 runs under load: its threads may run one after another.)
  {
    analysis::MemoryGate gate(100);
    const analysis::MemoryGate::Hold first(&gate, 30);
    std::int64_t both = 0;
    std::thread([&] {
      const analysis::MemoryGate::Hold second(&gate, 30);
      both = gate.held();
    }).join();
    CHECK(both == 60);
  }
  CHECK(most_held(100, sizes, 4, 50) == 30);  // one at a time beside 50: 30 + 30 + 50 > 100
  CHECK(most_held(100, sizes, 4, 40) <= 60);
  // More beside than the budget: each piece runs alone, none waits for ever.
  CHECK(most_held(100, sizes, 2, 150) == 30);
  // What a piece of unknown size holds is the budget less what is beside, at least a byte.
  analysis::MemoryGate gate(100);
  gate.hold_beside(35);
  CHECK(gate.budget() == 65);
  gate.hold_beside(150);
  CHECK(gate.budget() == 1);
  gate.hold_beside(0);
  CHECK(gate.budget() == 100);
  // No budget: nothing is held back, whatever is beside.
  analysis::MemoryGate none(0);
  none.hold_beside(1000);
  CHECK(none.budget() == 0);
  CHECK(most_held(0, sizes, 2, 1000) <= 60);
}

namespace {

// Waits (yielding, no sleep) until `ready` holds, for at most 20 s: false where it never did, so that a
// gate that serves out of turn fails a CHECK rather than hanging the suite.
template <class Ready>
bool within_seconds(Ready ready) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!ready()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::yield();
  }
  return true;
}

// The order in which a waiter and a newcomer are let in: another piece holds `other` bytes of `gate`;
// `wait(gate, served)` runs on a thread of its own until it waits, and calls `served` while it holds
// its bytes; then a newcomer asks for `newcomer` bytes. The other piece lets go once the newcomer is
// queued (or was let in out of turn); 0 is first, 1 second. Each is numbered while it holds: numbered
// after its hold was let go, the waiter could be passed by the newcomer it had just let in, and the
// order read then was the threads' timing, not the gate's.
struct Served {
  int waiter = -1;
  int newcomer = -1;
  int newcomer_before_release = -1;  // where it was let in while the waiter waited (out of turn)
};
template <class Wait>
Served served_in_order(analysis::MemoryGate& gate, std::int64_t other, Wait wait, std::int64_t newcomer) {
  std::atomic<int> order{0};
  std::atomic<int> waiter_at{-1}, newcomer_at{-1};
  std::optional<analysis::MemoryGate::Hold> held;
  held.emplace(&gate, other);
  std::thread waiter([&] { wait(gate, [&] { waiter_at = order++; }); });
  REQUIRE(within_seconds([&] { return gate.waiting() == 1 && gate.held() == other; }));
  std::thread comer([&] {
    analysis::MemoryGate::Hold hold(&gate, newcomer);
    newcomer_at = order++;
  });
  // Queued behind the waiter (2 waiting), or, out of turn, let in at once.
  REQUIRE(within_seconds([&] { return gate.waiting() == 2 || newcomer_at >= 0; }));
  Served out;
  out.newcomer_before_release = newcomer_at;
  held.reset();
  waiter.join();
  comer.join();
  out.waiter = waiter_at;
  out.newcomer = newcomer_at;
  return out;
}

}  // namespace

TEST_CASE("memory gate: a step growing its hold is served before a newcomer that fits beside the others") {
  // Budget 100; another step holds 60. A step holding 30 grows to 80 (a later way's set-up): it lets its
  // 30 go and waits, 60 + 80 not fitting. A newcomer asks for 30, which fits beside the 60: before, it
  // was let in at once, ahead of the growth, and newcomers that kept coming kept the growth waiting for
  // as long as they came (no bound). In turn, it waits behind the growth, which goes first once the 60
  // is let go.
  analysis::MemoryGate gate(100);
  const Served s = served_in_order(
      gate, 60,
      [](analysis::MemoryGate& g, const auto& served) {
        analysis::MemoryGate::Hold hold(&g, 30);
        hold.grow_to(80);
        served();
      },
      30);
  CHECK(s.newcomer_before_release == -1);  // 0 before: the newcomer passed the waiting growth
  CHECK(s.waiter == 0);
  CHECK(s.newcomer == 1);
  CHECK(gate.held() == 0);
  CHECK(gate.waiting() == 0);
}

TEST_CASE("memory gate: a piece that needs the whole budget is served before newcomers that fit") {
  // An uncounted set-up holds the whole budget (step_estimate.cpp), let in only when nothing else is
  // held; before, each newcomer that fitted beside the holder passed it, so it waited while any did.
  analysis::MemoryGate gate(100);
  const Served s = served_in_order(
      gate, 40,
      [](analysis::MemoryGate& g, const auto& served) {
        analysis::MemoryGate::Hold hold(&g, g.budget());
        served();
      },
      40);
  CHECK(s.newcomer_before_release == -1);
  CHECK(s.waiter == 0);
  CHECK(s.newcomer == 1);
  CHECK(gate.most_held() == 100);
}

TEST_CASE("memory gate: a thread that holds bytes and acquires again is refused, naming the rule") {
  // Budget 100; this thread holds 60. Asking for 10 more beside them would fit, but a holder that asks
  // again queues behind the waiters before it, which may wait for its own 60: the gate's deadlock
  // (asking for 50 here would wait for ever on itself). Refused before it waits, nothing changed:
  // before, the 10 were let in.
  analysis::MemoryGate gate(100);
  const auto hold_again = [&](std::int64_t bytes) { analysis::MemoryGate::Hold again(&gate, bytes); };
  {
    analysis::MemoryGate::Hold outer(&gate, 60);
    CHECK_THROWS_WITH_AS(
        hold_again(10),
        doctest::Contains("a holder does not acquire again while it holds (it could wait for "
                          "ever on itself)"),
        InternalError);
    CHECK_THROWS_WITH_AS(hold_again(0), doctest::Contains("asked for 0 B while it holds 60 B"),
                         InternalError);
    CHECK(gate.held() == 60);
    CHECK(gate.waiting() == 0);  // no ticket taken
    // The way to hold more: grow the hold it has (it lets its 60 go first).
    outer.grow_to(90);
    CHECK(gate.held() == 90);
  }
  CHECK(gate.held() == 0);
  // A hold of no bytes holds nothing anyone waits for: a step that reserved nothing holds its later
  // set-ups inside it (StepCache's estimates, step_estimate.cpp), and grows it once they are let go.
  {
    analysis::MemoryGate::Hold none(&gate, 0);
    {
      analysis::MemoryGate::Hold inner(&gate, 70);
      CHECK(gate.held() == 70);
      CHECK_THROWS_AS(none.grow_to(20), InternalError);  // the inner 70 still held
    }
    none.grow_to(20);
    CHECK(gate.held() == 20);
  }
  CHECK(gate.held() == 0);
  // Another thread's bytes are its own: it holds 30 while this one takes 50.
  std::atomic<bool> holding{false}, done{false};
  std::thread other([&] {
    analysis::MemoryGate::Hold hold(&gate, 30);
    holding = true;
    while (!done) std::this_thread::yield();
  });
  while (!holding) std::this_thread::yield();
  {
    analysis::MemoryGate::Hold mine(&gate, 50);
    CHECK(gate.held() == 80);
  }
  done = true;
  other.join();
  // A hold grown on another thread than the one that took it is refused, nothing changed: counted
  // under the other thread, it would have let that thread hold and ask again.
  {
    analysis::MemoryGate::Hold taken_here(&gate, 30);
    std::string refused;
    std::thread elsewhere([&] {
      try {
        taken_here.grow_to(40);
      } catch (const InternalError& e) {
        refused = e.what();
      }
    });
    elsewhere.join();
    CHECK(refused.find("gave back 30 B but holds 0 B") != std::string::npos);
    CHECK(gate.held() == 30);
  }
  CHECK(gate.held() == 0);
  // No budget: nothing waits, and the rule holds still.
  analysis::MemoryGate unlimited(0);
  analysis::MemoryGate::Hold first(&unlimited, 5);
  CHECK_THROWS_AS([&] { analysis::MemoryGate::Hold again(&unlimited, 5); }(), InternalError);
}
