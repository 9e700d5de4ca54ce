// `--set` overrides that could only be ignored: a field set twice (the first value would be
// silently replaced by the second), and, in a sweep, a field the sweep itself sets at every point
// (the user's value would never be simulated). Both are refused, naming the overrides involved.
#include "scenarios/loader/scenario.h"
#include "sim/error.h"
#include "sim/text.h"

namespace hybridsim::scenarios {
namespace {

// The same field, or one inside the other (parallelism and parallelism.dp).
bool overlaps(const std::string& a, const std::string& b) {
  return a == b || a.starts_with(b + ".") || b.starts_with(a + ".");
}

}  // namespace

void check_overrides_once(std::span<const std::string> overrides, const OverrideOrigin& origin) {
  for (std::size_t i = 0; i < overrides.size(); ++i)
    for (std::size_t j = 0; j < i; ++j) {
      const std::string path = override_path(overrides[i]);
      if (path.empty() || path != override_path(overrides[j])) continue;
      throw InputError(origin.where(i, overrides[i]) + ": " + path + " is set twice (first by " +
                       origin.where(j, overrides[j]) +
                       "), and only the last would count; expected each field set once");
    }
}

void check_overrides_outside_sweep(std::span<const std::string> overrides, const Scenario& s,
                                   const OverrideOrigin& origin) {
  for (std::size_t o = 0; o < overrides.size(); ++o) {
    const std::string& text = overrides[o];
    const std::string path = override_path(text);
    if (path == "sweep" || path.starts_with("sweep.")) continue;  // changes the sweep itself
    for (std::size_t i = 0; i < s.sweep.parameters.size(); ++i) {
      const std::string& swept = s.sweep.parameters[i].path;
      if (!overlaps(path, swept)) continue;
      const std::string key = "sweep.parameters[" + std::to_string(i) + "].path";
      throw InputError(origin.where(o, text) + ": the sweep sets " + swept + " at every point (" + key +
                       ", " + location_of(s, key) +
                       "), so this value would never be simulated; expected a field " +
                       "the sweep does not vary, or the value among the sweep's values");
    }
  }
}

}  // namespace hybridsim::scenarios
