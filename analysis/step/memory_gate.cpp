#include "analysis/step/memory_gate.h"

#include <algorithm>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace hybridsim::analysis {

void MemoryGate::acquire(std::int64_t bytes) { exchange(0, bytes); }

void MemoryGate::release(std::int64_t bytes) {
  {
    std::lock_guard guard(lock_);
    held_ -= bytes;
  }
  freed_.notify_all();
  // What was freed goes back to the system, so that the process's memory follows what is held: glibc
  // keeps each thread's arena at its highest use, and `plan -m gnmt --gpus 16384` on 2 threads stayed
  // at 4.8-5.2 GB for minutes under a 4 GiB cap while its candidates' set-ups came and went
  // (tests/bench/MEASUREMENTS.md, plan16k2).
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

void MemoryGate::exchange(std::int64_t from, std::int64_t to) {
  std::unique_lock guard(lock_);
  if (from != 0) {
    held_ -= from;
    freed_.notify_all();
  }
  // In turn: a newcomer that fits takes a ticket behind one that does not yet, rather than pass it.
  const std::uint64_t ticket = next_ticket_++;
  freed_.wait(guard,
              [&] { return ticket == serving_ && (budget_ <= 0 || held_ == 0 || held_ + to <= budget_); });
  ++serving_;
  held_ += to;
  most_held_ = std::max(most_held_, held_);
  freed_.notify_all();  // the next in turn may fit beside it
}

std::int64_t MemoryGate::held() const {
  std::lock_guard guard(lock_);
  return held_;
}

std::uint64_t MemoryGate::waiting() const {
  std::lock_guard guard(lock_);
  return next_ticket_ - serving_;
}

std::int64_t MemoryGate::most_held() const {
  std::lock_guard guard(lock_);
  return most_held_;
}

}  // namespace hybridsim::analysis
