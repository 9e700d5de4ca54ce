#include "sim/time_window.h"

#include <stdexcept>
#include <string>
#include <utility>

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

std::string time_window_side_problem(std::string_view text) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos || text.find(':', colon + 1) != std::string_view::npos) return {};
  const std::pair<const char*, std::string_view> sides[] = {{"START", trim(text.substr(0, colon))},
                                                            {"END", trim(text.substr(colon + 1))}};
  for (const auto& [name, side] : sides) {
    if (side.empty()) continue;
    try {
      parse_time(side);
    } catch (const InputError& e) {
      // Not a number at all ("bad time ..."): the form below says what one looks like.
      if (std::string_view(e.what()).starts_with("bad ")) return {};
      return std::string(name) + ": " + e.what();
    } catch (const std::overflow_error&) {
      return std::string(name) + ": \"" + std::string(side) + "\" is too large";
    }
  }
  return {};
}

TimeWindow parse_time_window(std::string_view text) {
  if (const auto w = try_parse_time_window(text)) return *w;
  if (trim(text) == ":")
    throw InputError("time window \"" + std::string(text) +
                     "\": both ends left out, which is the whole step; expected a start, an end or both "
                     "(leave the window out for the whole step)");
  const std::string side = time_window_side_problem(text);
  throw InputError("time window \"" + std::string(text) + "\": " + (side.empty() ? "" : side + "; ") +
                   "expected " + std::string(kTimeWindowForm));
}

std::string format_time_window(const TimeWindow& window) {
  return format_time(window.start) + ":" +
         (window.end == Time::max() ? std::string() : format_time(window.end));
}

}  // namespace hybridsim::sim
