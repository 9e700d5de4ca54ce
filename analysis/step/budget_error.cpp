#include "analysis/step/budget_error.h"

#include "sim/units.h"

namespace hybridsim::analysis {

std::string budget_error_text(const sim::BudgetExceeded& e, std::string_view what, const BudgetKnobs& knobs,
                              bool fast_path_off) {
  std::string out = e.estimate_text(what);
  // With the figure it takes if its collectives do not fold: a cap raised to the estimate alone
  // passed the folded step, then refused the way the run falls back to (issue 31); the same for
  // memory, where the fold holds only its representatives' state.
  const std::string cap = e.upper_cap_text();
  const std::string to = cap.empty() ? std::string() : " to " + cap + " or more";
  if (e.kind == sim::BudgetExceeded::Kind::Events) {
    out += ", over the limit " + std::string(knobs.events_limit) + " = " +
           sim::BudgetExceeded::count_text(e.limit) + "; raise it" + to + " (" +
           std::string(knobs.events_raise) + ", 0 = no limit)";
  } else {
    out += ", over the limit " + std::string(knobs.memory_limit) + " = " +
           sim::format_bytes(sim::Bytes::of(static_cast<std::int64_t>(e.limit))) + "; raise it" + to + " (" +
           std::string(knobs.memory_raise) + ", 0 = no limit)";
  }
  if (fast_path_off) out += " or " + std::string(knobs.fast_path_on);
  return out;
}

}  // namespace hybridsim::analysis
