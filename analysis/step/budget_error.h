// The words of a sim::BudgetExceeded for the one who asked (sim/budget.h): the estimate, the
// limit as that command or file sets it, and the ways past it.
//   catch (const sim::BudgetExceeded& e) {
//     throw budget_refusal("s.yaml", e, "the step", scenario_budget_knobs(), off);
//   }
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "analysis/output/option_spelling.h"
#include "sim/budget.h"
#include "sim/error.h"

namespace hybridsim::analysis {

// What a step or collective was refused for, beside the text: the cap it passed, its estimate against
// that cap, the cap that passes where it is known, and the refusal's words from the estimate on
// (budget_error_text's, below), without who was refused: what a caller reads instead of cutting the
// text (the planners' "not simulated" rows; the Python module's BudgetError attributes).
struct BudgetRefused {
  sim::BudgetExceeded::Kind kind = sim::BudgetExceeded::Kind::Events;
  std::uint64_t estimate = 0;  // events, or bytes for Memory
  std::uint64_t limit = 0;     // the cap passed, in the same unit
  std::uint64_t needed = 0;    // a cap that passes whichever way it runs, as the words quote it; 0: not known
  std::string words;           // "the step would simulate about 3.1e9 events (...), over the limit ..."
};

// A step or collective refused for its simulation budget, in the words above: bad input like any
// other to the command line; its own exception type to the Python module (hybridsim.BudgetError).
class BudgetRefusal : public InputError {
 public:
  // what(): `text`, which says `refused.words` (after who was refused: budget_refusal below).
  BudgetRefusal(const std::string& text, BudgetRefused refused)
      : InputError(text), refused_(std::move(refused)) {}
  const BudgetRefused& refused() const { return refused_; }

 private:
  BudgetRefused refused_;
};

// How a command sets each cap ("simulation.max_events", "--max-events N or simulation.max_events")
// and how to turn its fast path back on, in the words of the interface asked (OptionSpelling).
struct BudgetKnobs {
  std::string events_limit;  // named with the limit: "simulation.max_events"
  std::string events_raise;  // "--max-events N or simulation.max_events"
  std::string memory_limit;
  std::string memory_raise;
  std::string fast_path_on;  // "set communication.fast_path: auto"
};
// run and sweep: the scenario's keys, and the command line's options or Python's set= overlay.
BudgetKnobs scenario_budget_knobs(const OptionSpelling& spelling = {});
// study and plan: their options, and the study file's fast path.
BudgetKnobs study_budget_knobs(const OptionSpelling& spelling = {});

// "the step would simulate about 3.1e9 events (about 10 minutes at 5e6 events/s), over the limit
// simulation.max_events = 2e9; raise it (--max-events N or simulation.max_events, 0 = no limit) or
// set communication.fast_path: auto". The fast path is offered when it is off (and would help).
// Where the step may fall back to simulating its collectives in full (BudgetExceeded::upper), "...,
// up to 9.3e7 if its collectives do not fold, ...; raise it to 94000000 or more (--max-events N ...)":
// that cap passes whichever way the step runs; where the estimate is that figure already (every GPU
// and collective in full, a run refused after its fold was given up), "raise it to 83000 or more".
// Memory likewise: "..., up to 310 MB if its collectives
// do not fold, ...; raise it to 310 MB or more (--max-sim-memory SIZE ...)".
std::string budget_error_text(const sim::BudgetExceeded& e, std::string_view what, const BudgetKnobs& knobs,
                              bool fast_path_off);
// `who` refused for `e`: what() "<who>: <budget_error_text>" ("s.yaml: the step would ..."), the words
// alone where `who` is empty, with the cap, estimate and words kept (BudgetRefused).
BudgetRefusal budget_refusal(std::string_view who, const sim::BudgetExceeded& e, std::string_view what,
                             const BudgetKnobs& knobs, bool fast_path_off);

}  // namespace hybridsim::analysis
