#include "scenarios/loader/trace_settings.h"

#include <string>

#include "sim/error.h"
#include "sim/text.h"

namespace hybridsim::scenarios {

std::string_view trace_detail_name(TraceDetail detail) {
  switch (detail) {
    case TraceDetail::Kernels: return "kernels";
    case TraceDetail::Steps: return "steps";
    case TraceDetail::Messages: return "messages";
  }
  return "kernels";
}

std::optional<TraceDetail> find_trace_detail(std::string_view text) {
  const std::string lower = sim::lowercase(sim::trim(text));
  for (const TraceDetail d : {TraceDetail::Kernels, TraceDetail::Steps, TraceDetail::Messages})
    if (lower == trace_detail_name(d)) return d;
  return std::nullopt;
}

TraceDetail parse_trace_detail(std::string_view text) {
  if (const auto d = find_trace_detail(text)) return *d;
  throw InputError("trace detail \"" + std::string(text) + "\": expected kernels, steps or messages");
}

}  // namespace hybridsim::scenarios
