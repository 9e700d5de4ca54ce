// A double as text with a fixed number of decimals ("%.*f"), for reports and CSV columns:
//   format_fixed(3.14159, 2) == "3.14"
#pragma once
#include <cstdio>
#include <string>

namespace hybridsim::analysis {

inline std::string format_fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

}  // namespace hybridsim::analysis
