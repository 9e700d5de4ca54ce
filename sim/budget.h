// sim::SimulationBudget — caps on the work and the memory of one simulation (a training step, one
// collective), checked before the work is done: what is sure to be simulated is estimated before
// the event loop starts, and a collective that will be simulated message by message is estimated
// again when it starts, before its first message (a ring whose fold falls back to full simulation
// is caught there). Past a cap it throws BudgetExceeded, an InputError the layer above words with
// its own way past the cap (a scenario key, a command-line option).
//   SimulationBudget budget({.max_events = 2'000'000'000});
//   budget.record(kernel_events, state_bytes);   // the work and state known up front
//   budget.check(full_cost_of_what_cannot_fold);  // throws when over
//   config.budget = &budget;                      // collectives charge themselves at their start
#pragma once
#include <cstdint>
#include "sim/limits.h"
#include <string>
#include <string_view>

#include "sim/error.h"

namespace hybridsim::sim {

// 2×10^9 events: about 7 minutes at the 5 million events a second measured on a 1,024-GPU step of
// GNMT with every ring in full (sim/README.md, "Budgets"); no shipped scenario or study comes near.
inline constexpr std::uint64_t kDefaultMaxEvents = limits::kEvents.value;
// The largest events cap a command or key takes: 10^18 events are about 6,000 years at
// kEventsPerSecond, so a larger cap would limit nothing, and 10^18 is exact as the double the
// scenario schema bounds simulation.max_events with. --max-events and the key hold the same bound.
inline constexpr std::uint64_t kLargestEventsCap = 1'000'000'000'000'000'000;
// 4 GiB of simulation state: the process stays under a few GB.
inline constexpr std::int64_t kDefaultMaxMemory = limits::kSimMemory.value;
// Bytes a message in flight holds: its Network slot (56 B) and free-list index (4 B), the event
// queue entry of its next hop (24 B) and that slot's generation (4 B), doubled for vectors grown
// by doubling; rounded up.
inline constexpr std::int64_t kBytesPerMessageInFlight = 192;
// What the simulator processes a second on this machine, for the errors' "about N minutes".
inline constexpr double kEventsPerSecond = 5e6;

struct SimulationLimits {
  std::uint64_t max_events = kDefaultMaxEvents;  // 0: no limit
  std::int64_t max_memory = kDefaultMaxMemory;   // bytes of simulation state; 0: no limit
  // Not a cap: the threads a folded step's tree model runs may use (sim/fast/tree_model.h); 0: the
  // default, min(2, the machine's hardware threads); 1: none but the simulation's own.
  unsigned model_threads = 0;
  bool operator==(const SimulationLimits&) const = default;
};

// The caps as every command and key reads them (--max-events, --max-sim-memory,
// simulation.max_events / max_memory): "unlimited" is no limit, as is 0 events or a size of 0 ("0 B");
// a memory cap is a size with its unit (a bare "0" is refused, as the scenario key refuses it); an
// events cap past kLargestEventsCap is refused, as the key refuses it.
// Throw InputError with the accepted forms; the caller prefixes the option or key. Return 0 for none.
std::uint64_t parse_events_cap(std::string_view text);
std::int64_t parse_memory_cap(std::string_view text);

// What simulating something message by message costs: events (a message of h hops takes about h + 1:
// one per link it enters and its delivery), its messages, the state it holds while it lives
// (per rank, per route) and the most messages it can have in flight at once.
struct SimulationCost {
  std::uint64_t events = 0;
  std::uint64_t messages = 0;
  std::int64_t state_bytes = 0;
  std::uint64_t in_flight = 0;
  SimulationCost& operator+=(const SimulationCost& o);
  // state_bytes + in_flight × kBytesPerMessageInFlight (saturating).
  std::int64_t memory() const;
};

// The events simulating a collective is expected to take the way it will be simulated
// (Collective::expected_events): on the step's queue (a collective in full, an embedded ring's
// segments) and on its models' own (counted in its simulation_path().private_events: a folded
// ring's or tree's). What a step weighs against its events budget before its event loop
// (analysis/step/step_estimate.h).
struct ExpectedEvents {
  std::uint64_t queue = 0;
  std::uint64_t models = 0;
  std::uint64_t total() const { return queue + models; }
  ExpectedEvents& operator+=(const ExpectedEvents& o) {
    queue += o.queue;
    models += o.models;
    return *this;
  }
};

class BudgetExceeded : public InputError {
 public:
  enum class Kind : std::uint8_t { Events, Memory };
  // `estimate`: the events (or bytes) the simulation would reach; `cause`: what is being simulated
  // in full when it was found mid-run ("a ring all-reduce of 1 GiB over 4096 ranks, ..."), empty
  // when found up front.
  BudgetExceeded(Kind kind, std::uint64_t estimate, std::uint64_t limit, std::uint64_t in_flight,
                 std::string cause);
  Kind kind;
  std::uint64_t estimate;
  std::uint64_t limit;
  std::uint64_t in_flight;  // Memory: messages in flight at once, in the estimate
  std::string cause;
  // What it would take (events, or bytes for Memory) if none of its collectives folded, where that is
  // more than `estimate` (a step refused before or while it runs: the figure a cap must reach so
  // that no fallback is refused again); 0: none known.
  std::uint64_t upper = 0;
  // "the step would simulate about 3.1e9 events (about 10 minutes at 5 M events/s)" and the
  // like, without the limit, with ", up to 9.3e9 if its collectives do not fold" (or ", up to
  // 2.1 GB ...") where `upper` says so; `what` names the simulation ("the step", "the collective").
  std::string estimate_text(std::string_view what) const;
  // The cap that passes whichever way the step runs, to quote beside "raise it": cap_at_least(upper)
  // events or memory_cap_at_least(upper) bytes; 0 where `upper` is unknown or under `estimate`. An
  // `upper` equal to `estimate` counts: the estimate is then the figure in full (every GPU and
  // collective simulated), and the cap that passes it is known.
  std::uint64_t cap_that_passes() const;
  // A count as people read it: whole below a million, else "3.1e9", "2e9".
  static std::string count_text(std::uint64_t v);
  // A cap at least `v` as a whole number to type: `v` below a million, else rounded up at its
  // second digit (93,456,789 → 94000000), so that the cap quoted is never under what it must pass.
  static std::uint64_t cap_at_least(std::uint64_t v);
  // The same for bytes: whole below a thousand, else rounded up at its second digit, so that it
  // reads as a decimal size (96,832 B → 97 kB, 2,147,483,648 B → 2.2 GB).
  static std::uint64_t memory_cap_at_least(std::uint64_t bytes);
};

class SimulationBudget {
 public:
  explicit SimulationBudget(SimulationLimits limits = {}) : limits_(limits) {}
  const SimulationLimits& limits() const { return limits_; }
  // Work and state that are sure: counted from now on, not checked.
  void record(std::uint64_t events, std::int64_t state_bytes);
  // Throws BudgetExceeded if what is recorded plus `extra` passes a cap (extra's state and messages
  // in flight join the recorded state for the memory cap).
  void check(const SimulationCost& extra, std::string_view cause = {}) const;
  // The most messages the whole simulation may hold in flight at once, known up front (a step's:
  // every collective's own most in full, over those that can have messages in flight together,
  // analysis/step/step_in_flight.h), this one's among them.
  void record_in_flight(std::uint64_t messages) { in_flight_ = messages; }
  // A collective about to be simulated in full, before its first message: its events checked, and
  // its messages in flight with every other's (the recorded most, where that is more than its own:
  // a fold that falls back mid-run holds its messages beside the rest of the run's), then its events
  // recorded (its state_bytes are left out: a collective's state is recorded up front with the
  // others').
  void charge(const SimulationCost& cost, std::string_view cause);
  std::uint64_t events() const { return events_; }

 private:
  SimulationLimits limits_;
  std::uint64_t events_ = 0;
  std::int64_t state_bytes_ = 0;
  std::uint64_t in_flight_ = 0;
};

}  // namespace hybridsim::sim
