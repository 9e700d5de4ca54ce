#include "sim/execution_record.h"

#include <new>

#include "sim/error.h"

namespace hybridsim::sim {

ExecutionRecord::ExecutionRecord(const std::vector<std::uint32_t>& tasks_per_stream,
                                 std::vector<std::uint32_t> gpu_of_stream, Time start)
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
  entries_.reset(static_cast<Entry*>(std::calloc(total + 1, sizeof(Entry))));
  if (entries_ == nullptr) throw std::bad_alloc();
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
