// A double as text with a fixed number of decimals ("%.*f"), for reports and CSV columns:
//   format_fixed(3.14159, 2) == "3.14"
//   format_fixed_nonzero(0.00123, 2) == "0.00123"   (format_fixed would say "0.00")
#pragma once
#include <cmath>
#include <cstdio>
#include <string>

namespace hybridsim::analysis {

inline std::string format_fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

// format_fixed, except that a value other than 0 that the decimals would write as zero ("0.00",
// "-0.0000") is written in three significant digits ("0.00123", "1.3e-297"): an e_min of 1e-300 gave
// a time to train of "0.00 h (0.00 epochs)" in run's summary and 0.000000 in a sweep's or study's CSV,
// training that takes nothing. The one rule of every time to train and epochs count written.
inline std::string format_fixed_nonzero(double value, int decimals) {
  std::string text = format_fixed(value, decimals);
  if (value == 0 || !std::isfinite(value) || text.find_first_not_of("-0.") != std::string::npos) return text;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g", value);
  return buf;
}

}  // namespace hybridsim::analysis
