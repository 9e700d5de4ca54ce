#include "analysis/step/budget_error.h"

#include "sim/units.h"

namespace hybridsim::analysis {

BudgetKnobs scenario_budget_knobs(const OptionSpelling& spelling) {
  // Python's run() and sweep() take no caps of their own: the scenario's, overlaid with set=.
  if (spelling.is_python())
    return {"simulation.max_events", "simulation.max_events, e.g. set={'simulation.max_events': N}",
            "simulation.max_memory", "simulation.max_memory, e.g. set={'simulation.max_memory': '8 GiB'}",
            "set communication.fast_path: auto"};
  return {"simulation.max_events", "--max-events N or simulation.max_events", "simulation.max_memory",
          "--max-sim-memory SIZE or simulation.max_memory", "set communication.fast_path: auto"};
}

BudgetKnobs study_budget_knobs(const OptionSpelling& spelling) {
  return {spelling.name("max-events"), spelling.takes("max-events", "N"), spelling.name("max-sim-memory"),
          spelling.takes("max-sim-memory", spelling.is_python() ? "'SIZE'" : "SIZE"),
          "set communication.fast_path: auto in the study file"};
}

std::string budget_error_text(const sim::BudgetExceeded& e, std::string_view what, const BudgetKnobs& knobs,
                              bool fast_path_off) {
  std::string out = e.estimate_text(what);
  // With the figure it takes if its collectives do not fold: a cap raised to the estimate alone
  // passed the folded step, then refused the way the run falls back to (issue 31); the same for
  // memory, where the fold holds only its representatives' state. Also where the estimate is the
  // figure in full (a step refused by its own estimate once its fold was given up), so that every
  // refusal that knows what passes says it: Mixtral 8x7B ep 8 with trees at --max-events 995600
  // said "raise it" alone.
  const std::uint64_t passes = e.cap_that_passes();
  std::string cap;
  if (passes != 0)
    cap = e.kind == sim::BudgetExceeded::Kind::Events
              ? std::to_string(passes)
              : sim::format_bytes(sim::Bytes::of(static_cast<std::int64_t>(passes)));
  const std::string to = cap.empty() ? std::string() : " to " + cap + " or more";
  if (e.kind == sim::BudgetExceeded::Kind::Events) {
    out += ", over the limit " + knobs.events_limit + " = " +
           sim::BudgetExceeded::count_text(e.limit) + "; raise it" + to + " (" +
           knobs.events_raise + ", 0 = no limit)";
  } else {
    out += ", over the limit " + knobs.memory_limit + " = " +
           sim::format_bytes(sim::Bytes::of(static_cast<std::int64_t>(e.limit))) + "; raise it" + to + " (" +
           knobs.memory_raise + ", 0 B or unlimited = no limit)";
  }
  if (fast_path_off) out += " or " + knobs.fast_path_on;
  return out;
}

BudgetRefusal budget_refusal(std::string_view who, const sim::BudgetExceeded& e, std::string_view what,
                             const BudgetKnobs& knobs, bool fast_path_off) {
  BudgetRefused refused{.kind = e.kind,
                        .estimate = e.estimate,
                        .limit = e.limit,
                        .needed = e.cap_that_passes(),
                        .words = budget_error_text(e, what, knobs, fast_path_off)};
  const std::string text = who.empty() ? refused.words : std::string(who) + ": " + refused.words;
  return BudgetRefusal(text, std::move(refused));
}

}  // namespace hybridsim::analysis
