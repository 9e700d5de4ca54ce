// Why a collective ran in full, in words: its path's reason and, where only chunks of unequal size
// kept it from folding under `fast_path: auto`, what the bounded path would have folded it within
// (SimulationPath::bound of an unfolded path; sim/README.md, "Folding"). Owned text, so that it
// outlives the collective (a reason is a view into it).
//   r.simulation.full_reason = sim::unfolded_reason(collective.simulation_path());
#pragma once
#include <string>

#include "sim/collective.h"
#include "sim/units.h"

namespace hybridsim::sim {

inline std::string unfolded_reason(const SimulationPath& path) {
  std::string out(path.reason);
  if (!path.folded && path.bound > Time::zero())
    out += " (fast_path: bounded would fold it within " + human_time(path.bound) + ")";
  return out;
}

}  // namespace hybridsim::sim
