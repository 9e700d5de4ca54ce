#include "analysis/plan/nothing_fits.h"

namespace hybridsim::analysis {

std::string nothing_fits_text(const NothingFits& n) {
  return (n.lead.empty() ? "" : n.lead + ": ") + "none of the " + std::to_string(n.count) + " " + n.kind +
         " of " + n.what + " fits in " + n.capacity + "; the least, " + n.least + ", needs " + n.needs +
         "; expected " + n.expected + (n.aside.empty() ? "" : " (" + n.aside + ")");
}

}  // namespace hybridsim::analysis
