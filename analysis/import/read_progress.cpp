#include "analysis/import/read_progress.h"

#include <chrono>
#include <fstream>
#include <utility>

namespace hybridsim::analysis {

std::optional<std::int64_t> bytes_read_by_process() {
  std::ifstream io("/proc/self/io");
  for (std::string key; io >> key;) {
    std::int64_t value = 0;
    if (!(io >> value)) return std::nullopt;
    if (key == "rchar:") return value;
  }
  return std::nullopt;
}

ReadProgress::ReadProgress(std::ostream* out, std::string label, std::int64_t size, int passes)
    : progress_(out, std::move(label), static_cast<double>(size) * passes, "bytes"),
      what_(passes > 1 ? "reading the file (" + std::to_string(passes) + " passes)" : "reading the file"),
      size_(size) {
  const std::optional<std::int64_t> start = bytes_read_by_process();
  if (out == nullptr || size <= 0 || !start) return;
  start_ = *start;
  thread_ = std::thread([this] { poll(); });
}

ReadProgress::~ReadProgress() {
  {
    std::lock_guard guard(lock_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ReadProgress::set_passes(int passes) {
  std::lock_guard guard(lock_);
  progress_.set_total(static_cast<double>(size_) * passes);
  what_ = "reading the file (" + std::to_string(passes) + " passes)";
}

void ReadProgress::poll() {
  std::unique_lock guard(lock_);
  while (!wake_.wait_for(guard, std::chrono::milliseconds(200), [this] { return stop_; })) {
    const std::optional<std::int64_t> now = bytes_read_by_process();
    if (now) progress_.advance(static_cast<double>(*now - start_), what_);
  }
}

}  // namespace hybridsim::analysis
