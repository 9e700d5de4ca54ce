#include "sim/gpu_program.h"

#include <algorithm>

#include "sim/error.h"

namespace hybridsim::sim {

TaskList TaskList::shifted_from(TaskList& base, std::uint32_t event_shift, std::uint32_t collective_shift) {
  if (!base.shared_) {
    base.shared_ = std::make_shared<const std::vector<Task>>(std::move(base.own_));
    base.own_ = {};
  }
  TaskList out;
  out.shared_ = base.shared_;
  // Shifts add up: a list shifted from a shifted list shifts its base by both.
  out.event_shift_ = base.event_shift_ + event_shift;
  out.collective_shift_ = base.collective_shift_ + collective_shift;
  out.own_index_ = base.own_index_;
  out.own_rank_ = base.own_rank_;
  out.own_ = base.own_;  // its own collectives but the first, if any
  return out;
}

std::vector<Task>& TaskList::mutate() {
  if (shared_) {
    std::vector<Task> tasks;  // read before its own collectives (in own_) are let go
    tasks.reserve(shared_->size());
    for (const Task& t : *shared_) tasks.push_back(shift(t));
    own_ = std::move(tasks);
    shared_.reset();
    event_shift_ = collective_shift_ = 0;
    own_index_ = own_rank_ = kOwnCollective;
  }
  return own_;
}

void TaskList::set_own_collective(std::uint32_t index, std::uint32_t rank, std::uint32_t k) {
  if (k == 0) {
    own_index_ = index;
    own_rank_ = rank;
    return;
  }
  if (!shared_) throw InternalError("a list of its own holds no own collective but its first");
  if (own_.size() < k)
    for (std::uint32_t j = static_cast<std::uint32_t>(own_.size()) + 1; j <= k; ++j)
      own_.push_back(own_collective(j));  // unset: reads as stored
  own_[k - 1] = Task::collective(index, rank);
}

std::vector<Task> TaskList::own_collectives() const {
  std::vector<Task> out{Task::collective(own_index_, own_rank_)};
  if (shared_) out.insert(out.end(), own_.begin(), own_.end());
  return out;
}

void TaskList::set_own_collectives(const std::vector<Task>& own) {
  for (std::size_t k = 0; k < own.size(); ++k)
    set_own_collective(own[k].id, own[k].rank, static_cast<std::uint32_t>(k));
}

TaskList TaskList::with_own_collectives(std::vector<Task> tasks, const std::vector<Task>& own) {
  TaskList out(std::move(tasks));
  if (std::ranges::none_of(out.own_, is_own_collective)) return out;
  TaskList shared = shifted_from(out, 0, 0);
  shared.set_own_collectives(own);
  return shared;
}

}  // namespace hybridsim::sim
