// `--set` overrides that could only be ignored: a field set twice (the first value would be
// silently replaced by the second), and, in a sweep, a field the sweep itself sets at every point
// (the user's value would never be simulated). Both are refused, naming the overrides involved.
#include "scenarios/loader/scenario.h"
#include "sim/error.h"
#include "sim/text.h"
#include "sim/yaml/tree.h"

namespace hybridsim::scenarios {
namespace {

// The same field, or one inside the other (parallelism and parallelism.dp).
bool overlaps(const std::string& a, const std::string& b) {
  return a == b || a.starts_with(b + ".") || b.starts_with(a + ".");
}

// Whether the value of `text` (a section's override, "parallelism={dp: 4}") writes the field
// `inner` below its path `outer` (parallelism.dp). Map keys only: a field under a list index
// (placement[0].gpu) is not looked for, nor is a value that is not YAML (its own parse refuses it).
bool value_writes(std::string_view text, const std::string& outer, const std::string& inner) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos) return false;
  yaml::TreeNode value;
  try {
    value = yaml::parse_yaml_tree_at(text.substr(eq + 1), "");
  } catch (const InputError&) {
    return false;
  }
  const yaml::TreeNode* node = &value;
  std::string_view rest = std::string_view(inner).substr(outer.size() + 1);
  while (node != nullptr && !rest.empty()) {
    const auto dot = rest.find('.');
    node = node->find(rest.substr(0, dot));
    rest = dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
  }
  return node != nullptr;
}

}  // namespace

std::optional<LostOverride> lost_override(std::string_view earlier, std::string_view later) {
  const std::string first = override_path(earlier), last = override_path(later);
  if (first.empty() || last.empty()) return std::nullopt;
  if (first == last) return LostOverride{first, false};
  // A field set again inside a section's value: the section's value for it is lost.
  if (last.starts_with(first + ".") && value_writes(earlier, first, last)) return LostOverride{last, false};
  // A section set whole after a field inside it: the section replaces everything below it (a
  // --set removing it, =null, as well).
  if (first.starts_with(last + ".")) return LostOverride{first, true};
  return std::nullopt;
}

void check_overrides_once(std::span<const std::string> overrides, const OverrideOrigin& origin) {
  for (std::size_t i = 0; i < overrides.size(); ++i)
    for (std::size_t j = 0; j < i; ++j) {
      const auto lost = lost_override(overrides[j], overrides[i]);
      if (!lost) continue;
      if (!lost->replaced)
        throw InputError(origin.where(i, overrides[i]) + ": " + lost->field + " is set twice (first by " +
                         origin.where(j, overrides[j]) +
                         "), and only the last would count; expected each field set once");
      throw InputError(origin.where(i, overrides[i]) + ": replaces the whole of " +
                       override_path(overrides[i]) + ", so " + lost->field + " set before it (by " +
                       origin.where(j, overrides[j]) + ") would never count; expected " + lost->field +
                       " inside this value, or set after it");
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
