#include "analysis/step/memory_gate.h"

#include <algorithm>
#include <string>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "sim/error.h"

namespace hybridsim::analysis {
namespace {

using ByThread = std::vector<std::pair<std::thread::id, std::int64_t>>;

// The bytes `thread` holds (0: none recorded).
std::int64_t held_by(const ByThread& by_thread, std::thread::id thread) {
  for (const auto& [id, bytes] : by_thread)
    if (id == thread) return bytes;
  return 0;
}

// Adds `bytes` (negative: lets them go) to what `thread` holds, leaving out a thread that holds none.
void add_held(ByThread& by_thread, std::thread::id thread, std::int64_t bytes) {
  const auto it =
      std::find_if(by_thread.begin(), by_thread.end(), [&](const auto& e) { return e.first == thread; });
  if (it == by_thread.end()) {
    if (bytes != 0) by_thread.emplace_back(thread, bytes);
    return;
  }
  it->second += bytes;
  if (it->second == 0) by_thread.erase(it);
}

}  // namespace

void MemoryGate::acquire(std::int64_t bytes) { exchange(0, bytes); }

void MemoryGate::hold_beside(std::int64_t bytes) {
  {
    std::lock_guard guard(lock_);
    beside_ = std::max<std::int64_t>(bytes, 0);
  }
  freed_.notify_all();  // less beside: a waiter may fit now
}

std::int64_t MemoryGate::budget() const {
  std::lock_guard guard(lock_);
  return budget_ <= 0 ? budget_ : std::max<std::int64_t>(budget_ - beside_, 1);
}

void MemoryGate::release(std::int64_t bytes) {
  {
    std::lock_guard guard(lock_);
    held_ -= bytes;
    add_held(by_thread_, std::this_thread::get_id(), -bytes);
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
  const std::thread::id me = std::this_thread::get_id();
  // The rule that keeps the gate free of deadlock: a holder waits behind the waiters before it, which
  // may wait for the very bytes it holds (the gate's own deadlock, `plan` hanging with no error).
  const std::int64_t mine = held_by(by_thread_, me);
  if (mine < from)
    throw InternalError("memory gate: a thread gave back " + std::to_string(from) + " B but holds " +
                        std::to_string(mine) + " B; a hold is grown and let go on the thread that took it");
  if (const std::int64_t kept = mine - from; kept > 0)
    throw InternalError("memory gate: a thread asked for " + std::to_string(to) + " B while it holds " +
                        std::to_string(kept) +
                        " B; a holder does not acquire again while it holds (it could wait for ever on "
                        "itself): let the first hold go, or grow it (MemoryGate::Hold::grow_to)");
  if (from != 0) {
    held_ -= from;
    add_held(by_thread_, me, -from);
    freed_.notify_all();
  }
  // In turn: a newcomer that fits takes a ticket behind one that does not yet, rather than pass it.
  const std::uint64_t ticket = next_ticket_++;
  freed_.wait(guard, [&] {
    return ticket == serving_ && (budget_ <= 0 || held_ == 0 || beside_ + held_ + to <= budget_);
  });
  ++serving_;
  held_ += to;
  add_held(by_thread_, me, to);
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

void HeapReturn::when_due() {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ < every_) return;
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
  last_ = std::chrono::steady_clock::now();  // after it: a long trim does not make the next one due
}

std::int64_t heap_in_use() {
#if defined(__GLIBC__)
  const struct mallinfo2 heap = mallinfo2();
  return static_cast<std::int64_t>(heap.uordblks + heap.hblkhd);
#else
  return 0;
#endif
}

}  // namespace hybridsim::analysis
