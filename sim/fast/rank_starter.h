// sim::RankStarter — joins a collective's rank when its event fires: how a shortcut starts the
// ranks of its private segment on a queue of its own, at the times (or in the order) its real
// ranks joined (sim/fast/folded_ring.cpp, sim/fast/folded_tree.cpp).
//   RankStarter starter(segment);  queue.schedule_at(joined, starter, rank);
#pragma once
#include <cstdint>

#include "sim/collective.h"

namespace hybridsim::sim {

class RankStarter final : public EventHandler {
 public:
  explicit RankStarter(Collective& collective) : collective_(collective) {}
  void on_event(std::uint64_t rank) override { collective_.start(static_cast<std::uint32_t>(rank)); }

 private:
  Collective& collective_;
};

}  // namespace hybridsim::sim
