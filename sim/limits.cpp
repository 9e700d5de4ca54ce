#include "sim/limits.h"

namespace hybridsim::sim::limits {

std::string markdown_table() {
  std::string out = "| limit | value | what it limits | raised by | commands that apply it |\n";
  out += "|---|---|---|---|---|\n";
  for (const Limit* l : kAll) {
    out += "| `" + std::string(l->name) + "` | " + std::string(l->shown) + " | " + std::string(l->what) +
           " | " + (l->raised_by.empty() ? std::string("—") : std::string(l->raised_by)) + " | " +
           std::string(l->commands) + " |\n";
  }
  return out;
}

}  // namespace hybridsim::sim::limits
