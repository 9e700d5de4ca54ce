#include "scenarios/loader/override_origin.h"

#include <algorithm>

#include "sim/text.h"

namespace hybridsim::scenarios {

// A 20 KB value would bury the message that explains it.
std::string echoed_override(const std::string& text) {
  constexpr std::size_t kEcho = 80;
  if (text.size() <= kEcho) return text;
  return std::string(sim::utf8_prefix(text, kEcho)) + "... (" + std::to_string(text.size()) + " bytes)";
}

std::string override_path(std::string_view text) {
  return std::string(sim::trim(text.substr(0, std::min(text.find('='), text.size()))));
}

std::string override_value(std::string_view text) {
  const auto eq = text.find('=');
  return eq == std::string_view::npos ? std::string() : std::string(sim::trim(text.substr(eq + 1)));
}

std::string OverrideOrigin::where(std::size_t i, const std::string& text) const {
  return i < spelled.size() && !spelled[i].empty() ? echoed_override(spelled[i])
                                                   : "--set " + echoed_override(text);
}

}  // namespace hybridsim::scenarios
