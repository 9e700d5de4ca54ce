#include "analysis/trace/step_trace_options.h"

namespace hybridsim::analysis {

TraceFile trace_file(const std::filesystem::path& path, bool gzip) {
  const bool named_gz = path.filename().string().ends_with(".gz");
  if (!gzip || named_gz) return {path, gzip || named_gz};
  std::filesystem::path out = path;
  out += ".gz";
  return {out, true};
}

}  // namespace hybridsim::analysis
