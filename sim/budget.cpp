#include "sim/budget.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

#include "sim/saturating.h"
#include "sim/text.h"
#include "sim/units.h"

namespace hybridsim::sim {

namespace {

// "about 7 minutes", "about 3 hours", "about 2 days" at kEventsPerSecond.
std::string duration_text(std::uint64_t events) {
  const double seconds = static_cast<double>(events) / kEventsPerSecond;
  char buf[48];
  if (seconds < 1) return "under a second";
  if (seconds < 120) std::snprintf(buf, sizeof buf, "about %.0f s", seconds);
  else if (seconds < 2 * 3600.0) std::snprintf(buf, sizeof buf, "about %.0f minutes", seconds / 60);
  else if (seconds < 2 * 86400.0) std::snprintf(buf, sizeof buf, "about %.0f hours", seconds / 3600);
  else std::snprintf(buf, sizeof buf, "about %.0f days", seconds / 86400);
  return buf;
}

std::string message_for(BudgetExceeded::Kind kind, std::uint64_t estimate, std::uint64_t limit) {
  if (kind == BudgetExceeded::Kind::Events)
    return "the simulation would process about " + BudgetExceeded::count_text(estimate) +
           " events, over the limit of " + BudgetExceeded::count_text(limit) +
           " (simulation.max_events; 0 = no limit)";
  return "the simulation would hold about " + human_bytes(Bytes::of(static_cast<std::int64_t>(estimate))) +
         " of state, over the limit of " + human_bytes(Bytes::of(static_cast<std::int64_t>(limit))) +
         " (simulation.max_memory; 0 B or unlimited = no limit)";
}

// 93,456,789 → 94,000,000: never under `v`, and short to type.
std::uint64_t round_up_at_second_digit(std::uint64_t v) {
  std::uint64_t unit = 1;
  while (v / unit >= 100) unit *= 10;  // two digits left
  const std::uint64_t digits = v / unit + (v % unit != 0 ? 1 : 0);
  return digits > std::numeric_limits<std::uint64_t>::max() / unit ? v : digits * unit;
}

}  // namespace

std::string BudgetExceeded::count_text(std::uint64_t v) {
  if (v < 1'000'000) return std::to_string(v);
  int exponent = 0;
  double mantissa = static_cast<double>(v);
  while (mantissa >= 9.95) {
    mantissa /= 10;
    ++exponent;
  }
  char buf[32];
  if (std::fabs(mantissa - std::round(mantissa)) < 0.05)
    std::snprintf(buf, sizeof buf, "%.0fe%d", mantissa, exponent);
  else std::snprintf(buf, sizeof buf, "%.1fe%d", mantissa, exponent);
  return buf;
}

std::uint64_t BudgetExceeded::cap_at_least(std::uint64_t v) {
  return v < 1'000'000 ? v : round_up_at_second_digit(v);
}

std::uint64_t BudgetExceeded::memory_cap_at_least(std::uint64_t bytes) {
  return bytes < 1000 ? bytes : round_up_at_second_digit(bytes);
}

std::uint64_t BudgetExceeded::cap_that_passes() const {
  if (upper == 0 || upper < estimate) return 0;
  return kind == Kind::Events ? cap_at_least(upper) : memory_cap_at_least(upper);
}

SimulationCost& SimulationCost::operator+=(const SimulationCost& o) {
  events = add_saturating(events, o.events);
  messages = add_saturating(messages, o.messages);
  state_bytes = add_saturating(state_bytes, o.state_bytes);
  in_flight = add_saturating(in_flight, o.in_flight);
  return *this;
}

std::int64_t SimulationCost::memory() const {
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  const auto per = static_cast<std::uint64_t>(kBytesPerMessageInFlight);
  if (in_flight > static_cast<std::uint64_t>(kMax) / per) return kMax;
  return add_saturating(state_bytes, static_cast<std::int64_t>(in_flight * per));
}

BudgetExceeded::BudgetExceeded(Kind k, std::uint64_t e, std::uint64_t l, std::uint64_t f, std::string c)
    : InputError(message_for(k, e, l)), kind(k), estimate(e), limit(l), in_flight(f), cause(std::move(c)) {}

std::string BudgetExceeded::estimate_text(std::string_view what) const {
  std::string out(what);
  if (kind == Kind::Events) {
    out += " would simulate about " + BudgetExceeded::count_text(estimate) + " events (" +
           duration_text(estimate) + " at " +
           BudgetExceeded::count_text(static_cast<std::uint64_t>(kEventsPerSecond)) + " events/s)";
    if (upper > estimate)
      out += ", up to " + BudgetExceeded::count_text(upper) + " if its collectives do not fold";
  } else {
    out += " would hold about " + human_bytes(Bytes::of(static_cast<std::int64_t>(estimate))) +
           " of simulation state (" + BudgetExceeded::count_text(in_flight) + " messages in flight at once)";
    if (upper > estimate)
      out += ", up to " + human_bytes(Bytes::of(static_cast<std::int64_t>(upper))) +
             " if its collectives do not fold";
  }
  if (!cause.empty()) out += ", once " + cause;
  return out;
}

void SimulationBudget::record(std::uint64_t events, std::int64_t state_bytes) {
  events_ = add_saturating(events_, events);
  state_bytes_ = add_saturating(state_bytes_, state_bytes);
}

void SimulationBudget::check(const SimulationCost& extra, std::string_view cause) const {
  const std::uint64_t events = add_saturating(events_, extra.events);
  if (limits_.max_events != 0 && events > limits_.max_events)
    throw BudgetExceeded(BudgetExceeded::Kind::Events, events, limits_.max_events, extra.in_flight,
                         std::string(cause));
  const std::int64_t memory = add_saturating(state_bytes_, extra.memory());
  if (limits_.max_memory != 0 && memory > limits_.max_memory)
    throw BudgetExceeded(BudgetExceeded::Kind::Memory, static_cast<std::uint64_t>(memory),
                         static_cast<std::uint64_t>(limits_.max_memory), extra.in_flight, std::string(cause));
}

void SimulationBudget::charge(const SimulationCost& cost, std::string_view cause) {
  SimulationCost running = cost;
  running.state_bytes = 0;  // recorded up front with every collective's
  running.in_flight = std::max(running.in_flight, in_flight_);
  check(running, cause);
  events_ = add_saturating(events_, cost.events);
}

std::uint64_t parse_events_cap(std::string_view text) {
  if (text == "unlimited") return 0;
  if (const auto n = parse_whole<std::uint64_t>(text); n && *n <= kLargestEventsCap) return *n;
  throw InputError("expected a whole number of events from 0 to 1e18 (0 or unlimited: no limit)");
}

std::int64_t parse_memory_cap(std::string_view text) {
  if (text == "unlimited") return 0;
  try {
    return parse_bytes(text).count();
  } catch (const InputError& e) {
    throw InputError(std::string(e.what()) + " (0 B or unlimited: no limit)");
  }
}

}  // namespace hybridsim::sim
