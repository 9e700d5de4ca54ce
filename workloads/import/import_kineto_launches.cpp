// The launch table of a pass over a Kineto trace (import_kineto_launches.h).
#include "workloads/import/import_kineto_launches.h"

#include <algorithm>

namespace hybridsim::workloads::kineto_detail {

void LaunchTable::forget_over(std::list<std::int64_t>& fifo, std::size_t limit) {
  while (fifo.size() > limit) {
    const std::int64_t id = fifo.front();
    max_forgotten_ = forgot_ ? std::max(max_forgotten_, id) : id;
    forgot_ = true;
    held_.erase(id);
    fifo.pop_front();
  }
}

void LaunchTable::note_size() {
  high_water_ = std::max(high_water_, static_cast<std::int64_t>(held_.size() + pending_.size()));
}

const std::vector<LaunchTable::Activity>& LaunchTable::launch(std::int64_t correlation, sim::Time at) {
  resolved_.clear();
  if (correlation < 0 || held_.contains(correlation)) return resolved_;  // the first launch counts
  // One with this id forgotten may have come first: what it launched cannot be told apart.
  const bool suspect = forgot_ && correlation <= max_forgotten_;
  unmatched_.push_back(correlation);
  Entry& e =
      held_.try_emplace(correlation, Entry{at, std::prev(unmatched_.end()), false, suspect}).first->second;
  const auto [from, to] = pending_.equal_range(correlation);
  if (from != to) {
    exact_ &= !suspect;
    for (auto it = from; it != to; ++it) resolved_.push_back(it->second);
    pending_.erase(from, to);
    e.matched = true;
    matched_.splice(matched_.end(), unmatched_, e.place);
    forget_over(matched_, kMatched);
  }
  note_size();
  forget_over(unmatched_, kUnmatched);
  return resolved_;
}

LaunchTable::Lookup LaunchTable::find(std::int64_t correlation, const Activity& activity) {
  if (correlation < 0) return {};
  if (const auto it = held_.find(correlation); it != held_.end()) {
    Entry& e = it->second;
    exact_ &= !e.suspect;
    const sim::Time at = e.at;
    if (!e.matched) {
      e.matched = true;
      matched_.splice(matched_.end(), unmatched_, e.place);
      forget_over(matched_, kMatched);
    }
    return {Status::Found, at};
  }
  if (forgot_ && correlation <= max_forgotten_) {
    exact_ = false;
    return {Status::Unknown, {}};
  }
  if (pending_.size() >= kPending) {
    exact_ = false;
    return {Status::Unknown, {}};
  }
  pending_.emplace(correlation, activity);
  note_size();
  return {Status::Pending, {}};
}

std::vector<LaunchTable::Activity> LaunchTable::finish() {
  std::vector<Activity> left;
  left.reserve(pending_.size());
  for (const auto& [id, a] : pending_) left.push_back(a);
  pending_.clear();
  return left;
}

}  // namespace hybridsim::workloads::kineto_detail
