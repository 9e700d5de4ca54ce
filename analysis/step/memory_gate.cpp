#include "analysis/step/memory_gate.h"

#include <algorithm>

namespace hybridsim::analysis {

void MemoryGate::acquire(std::int64_t bytes) {
  std::unique_lock guard(lock_);
  freed_.wait(guard, [&] { return budget_ <= 0 || held_ == 0 || held_ + bytes <= budget_; });
  held_ += bytes;
  most_held_ = std::max(most_held_, held_);
}

void MemoryGate::release(std::int64_t bytes) {
  {
    std::lock_guard guard(lock_);
    held_ -= bytes;
  }
  freed_.notify_all();
}

std::int64_t MemoryGate::held() const {
  std::lock_guard guard(lock_);
  return held_;
}

std::int64_t MemoryGate::most_held() const {
  std::lock_guard guard(lock_);
  return most_held_;
}

}  // namespace hybridsim::analysis
