#include "analysis/trace/step_trace_options.h"

#include <charconv>
#include <string>

#include "sim/error.h"

namespace hybridsim::analysis {

TraceFile trace_file(const std::filesystem::path& path, bool gzip) {
  const bool named_gz = path.filename().string().ends_with(".gz");
  if (!gzip || named_gz) return {path, gzip || named_gz};
  std::filesystem::path out = path;
  out += ".gz";
  return {out, true};
}

int parse_trace_step(std::string_view text) {
  if (text == "first") return 1;
  if (text == "slowest") return kSlowestStep;
  int n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 1)
    throw InputError("trace step \"" + std::string(text) +
                     "\": expected first, slowest or a step number from 1 (of variability.steps)");
  return n;
}

}  // namespace hybridsim::analysis
