#include "scenarios/loader/override_origin.h"

namespace hybridsim::scenarios {

// A 20 KB value would bury the message that explains it.
std::string echoed_override(const std::string& text) {
  constexpr std::size_t kEcho = 80;
  if (text.size() <= kEcho) return text;
  std::size_t cut = kEcho;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // whole UTF-8 characters
  return text.substr(0, cut) + "... (" + std::to_string(text.size()) + " bytes)";
}

std::string OverrideOrigin::where(std::size_t i, const std::string& text) const {
  return i < spelled.size() && !spelled[i].empty() ? echoed_override(spelled[i])
                                                   : "--set " + echoed_override(text);
}

}  // namespace hybridsim::scenarios
