// A memory budget shared by work running at once on several threads: each piece of work reserves
// its estimated bytes before it starts and waits while the others' reservations leave too little
// (one whose estimate is over the whole budget runs when nothing else does). Waiters are served in
// the order they came (a ticket each): a step growing its hold, or one asking for the whole budget,
// was passed by every newcomer that fitted beside the others, and could wait for as long as they kept
// coming. Nothing waits for ever so long as no thread asks for more while it holds bytes (a step grows
// its own hold by exchange, which lets it go first): the rule is enforced, each thread's bytes counted
// apart, and a thread that asks while it holds bytes it does not give back in the same exchange gets
// an InternalError (it could wait for ever on itself; a Hold is let go on the thread that took it).
// The planner reserves each candidate's program and simulation estimate so (StepCache), so that two
// candidates built at once on two threads are counted against one budget.
//   MemoryGate gate(4 << 30);
//   { MemoryGate::Hold hold(&gate, bytes);  build_and_simulate(); }  // released at scope end
#pragma once
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace hybridsim::analysis {

class MemoryGate {
 public:
  // 0: no budget, nothing waits. `beside`: as hold_beside.
  explicit MemoryGate(std::int64_t budget, std::int64_t beside = 0)
      : budget_(budget), beside_(std::max<std::int64_t>(beside, 0)) {}
  // Waits until every earlier waiter is served and `bytes` fit beside what is held (or nothing is),
  // then holds them. InternalError, before it waits, where the calling thread holds bytes already.
  void acquire(std::int64_t bytes);
  // Gives `bytes` back, and the heap's free pages to the system (glibc: malloc_trim).
  void release(std::int64_t bytes);
  // Holds `to` bytes in place of `from`: lets `from` go first, then waits as acquire does, so that two
  // holders that both grow never wait on each other (no deadlock). InternalError, before anything is
  // let go, where the calling thread holds more than `from`.
  void exchange(std::int64_t from, std::int64_t to);
  std::int64_t held() const;
  // What the process holds beside the work the gate counts (`bytes`: the clusters' topologies with
  // their cached routes, every step's settings and results), which the work's holds share the budget
  // with from now on: they wait while they and these pass it. At least one byte of budget is left (a
  // piece of work larger than the rest runs when nothing else is held). `plan -m gnmt --gpus 16384`
  // held 0.17-0.45 GB so while its steps held up to the whole 4 GiB budget, and reached 5.0 GB
  // (tests/bench/MEASUREMENTS.md, plan16k5). No effect where there is no budget.
  void hold_beside(std::int64_t bytes);
  // The whole budget (0: none), less what is held beside (hold_beside): what a piece of work whose
  // bytes are not known before it is built holds, so that it runs when nothing else is held.
  std::int64_t budget() const;
  // The most bytes held at once since the gate was made: what a test reads to see the budget kept.
  std::int64_t most_held() const;
  // How many wait now: what a test reads to know a holder is queued.
  std::uint64_t waiting() const;

  class Hold {
   public:
    Hold(MemoryGate* gate, std::int64_t bytes) : gate_(gate), bytes_(bytes) {
      if (gate_) gate_->acquire(bytes_);
    }
    ~Hold() {
      if (gate_) gate_->release(bytes_);
    }
    // Holds `bytes` from now on where that is more than it holds (MemoryGate::exchange): a step's
    // later set-up, beyond its estimate's, held before it is built (step_runner.cpp).
    void grow_to(std::int64_t bytes) {
      if (gate_ == nullptr || bytes <= bytes_) return;
      gate_->exchange(bytes_, bytes);
      bytes_ = bytes;
    }
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;

   private:
    MemoryGate* gate_;
    std::int64_t bytes_;
  };

 private:
  std::int64_t budget_;
  std::int64_t beside_ = 0;  // hold_beside's
  std::int64_t held_ = 0;
  std::int64_t most_held_ = 0;
  std::uint64_t next_ticket_ = 0;  // the next waiter's
  std::uint64_t serving_ = 0;      // the ticket served next: waiters are let in in their order
  // The bytes each thread holds (those holding none left out): a few threads, looked up per hold.
  std::vector<std::pair<std::thread::id, std::int64_t>> by_thread_;
  mutable std::mutex lock_;
  std::condition_variable freed_;
};

// Gives the heap's free pages back to the system (glibc: malloc_trim) where `every` has passed since
// it last did, as a step runs: its run frees as it goes, and glibc keeps those pages resident among the
// ones in use. GNMT dp 8,192 x mp 2 hierarchical on 16,384 GPUs (counted at 3.85 GB) held 2.96 GB of
// heap in its every-GPU attempt, and 4.16 GB of RSS, 1.2 GB of it free (tests/bench/MEASUREMENTS.md,
// plan16k5).
class HeapReturn {
 public:
  explicit HeapReturn(std::chrono::steady_clock::duration every) : every_(every) {}
  void when_due();

 private:
  std::chrono::steady_clock::duration every_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// The bytes the process's heap holds now (glibc: mallinfo2's in use and mapped; 0 elsewhere): what
// StepCache holds beside its steps (MemoryGate::hold_beside). Measured, so it moves only when the
// steps run, never an answer: what is simulated and its figures are the same whatever it reads.
std::int64_t heap_in_use();

}  // namespace hybridsim::analysis
