#include "sim/time_window.h"

#include <stdexcept>

#include "sim/error.h"
#include "sim/text.h"

namespace hybridsim::sim {

std::optional<TimeWindow> try_parse_time_window(std::string_view text) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos || text.find(':', colon + 1) != std::string_view::npos)
    return std::nullopt;
  const std::string_view start_text = trim(text.substr(0, colon));
  const std::string_view end_text = trim(text.substr(colon + 1));
  // ":" is the whole step, what leaving the window out means: an unset variable on each side, likely.
  if (start_text.empty() && end_text.empty()) return std::nullopt;
  TimeWindow w;
  try {
    if (!start_text.empty()) w.start = parse_time(start_text);
    if (!end_text.empty()) w.end = parse_time(end_text);
  } catch (const InputError&) {
    return std::nullopt;
  } catch (const std::overflow_error&) {
    return std::nullopt;
  }
  if (w.start < Time::zero() || !(w.start < w.end)) return std::nullopt;
  return w;
}

TimeWindow parse_time_window(std::string_view text) {
  if (const auto w = try_parse_time_window(text)) return *w;
  if (trim(text) == ":")
    throw InputError("time window \"" + std::string(text) +
                     "\": both ends left out, which is the whole step; expected a start, an end or both "
                     "(leave the window out for the whole step)");
  throw InputError("time window \"" + std::string(text) + "\": expected " + std::string(kTimeWindowForm));
}

std::string format_time_window(const TimeWindow& window) {
  return format_time(window.start) + ":" +
         (window.end == Time::max() ? std::string() : format_time(window.end));
}

}  // namespace hybridsim::sim
