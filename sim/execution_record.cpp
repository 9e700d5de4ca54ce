#include "sim/execution_record.h"

#include <cstring>
#include <new>
#include <utility>

#include "sim/error.h"

namespace hybridsim::sim {

ExecutionRecord::ExecutionRecord(const std::vector<std::uint32_t>& tasks_per_stream,
                                 std::vector<std::uint32_t> gpu_of_stream, Time start)
    : ExecutionRecord(tasks_per_stream, std::move(gpu_of_stream), start, Storage{}) {}

ExecutionRecord::ExecutionRecord(const std::vector<std::uint32_t>& tasks_per_stream,
                                 std::vector<std::uint32_t> gpu_of_stream, Time start, Storage reuse)
    : gpu_of_stream_(std::move(gpu_of_stream)), start_(start) {
  if (tasks_per_stream.size() != gpu_of_stream_.size())
    throw InternalError("execution record: one GPU per stream expected");
  offset_.reserve(tasks_per_stream.size() + 1);
  std::uint64_t total = 0;
  for (const std::uint32_t n : tasks_per_stream) {
    offset_.push_back(static_cast<std::uint32_t>(total));
    total += n;
  }
  if (total > UINT32_MAX) throw InternalError("execution record: more than 2^32 tasks");
  offset_.push_back(static_cast<std::uint32_t>(total));
  // calloc(0) may return null; one entry more keeps the pointer valid for an empty record.
  const std::size_t entries = total + 1;
  if (reuse.entries_ != nullptr && reuse.capacity_ >= entries && reuse.capacity_ / 2 <= entries) {
    std::memset(static_cast<void*>(reuse.entries_.get()), 0, entries * sizeof(Entry));  // as calloc's
    entries_ = std::move(reuse.entries_);
    capacity_ = reuse.capacity_;
    return;
  }
  reuse = {};  // too few, or a much larger block held for nothing: freed before a fresh one is taken
  entries_.reset(static_cast<Entry*>(std::calloc(entries, sizeof(Entry))));
  if (entries_ == nullptr) throw std::bad_alloc();
  capacity_ = entries;
}

ExecutionRecord::Storage ExecutionRecord::take_storage() {
  Storage out;
  out.entries_ = std::move(entries_);
  out.capacity_ = std::exchange(capacity_, 0);
  offset_.assign(1, 0);
  gpu_of_stream_.clear();
  return out;
}

std::optional<ExecutionRecord::TaskRef> ExecutionRecord::released_by(std::uint32_t stream,
                                                                     std::uint32_t task) const {
  const auto aux = static_cast<std::uint64_t>(at(stream, task).aux);
  if (aux == 0) return std::nullopt;
  return TaskRef{static_cast<std::uint32_t>((aux >> 32) - 1),
                 static_cast<std::uint32_t>(aux & 0xffffffffULL)};
}

Time ExecutionRecord::slowed(std::uint32_t stream, std::uint32_t task) const {
  return Time::ps(at(stream, task).aux);
}

void ExecutionRecord::set_released_by(std::uint32_t stream, std::uint32_t task, TaskRef by) {
  at(stream, task).aux =
      static_cast<std::int64_t>((static_cast<std::uint64_t>(by.stream) + 1) << 32 | by.task);
}

}  // namespace hybridsim::sim
