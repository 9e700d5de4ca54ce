#include "sim/gpu_program.h"

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
  return out;
}

std::vector<Task>& TaskList::mutate() {
  if (shared_) {
    own_.clear();
    own_.reserve(shared_->size());
    for (const Task& t : *shared_) own_.push_back(shift(t));
    shared_.reset();
    event_shift_ = collective_shift_ = 0;
    own_index_ = own_rank_ = kOwnCollective;
  }
  return own_;
}

}  // namespace hybridsim::sim
