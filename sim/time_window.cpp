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

std::string time_window_problem(std::string_view text) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos || text.find(':', colon + 1) != std::string_view::npos) return {};
  const std::string_view start_text = trim(text.substr(0, colon));
  const std::string_view end_text = trim(text.substr(colon + 1));
  const std::pair<const char*, std::string_view> sides[] = {{"START", start_text}, {"END", end_text}};
  for (const auto& [name, side] : sides) {
    if (side.empty()) continue;
    // The time parser reads no sign, so it would say only the form.
    if (side.front() == '-')
      return std::string(name) + " " + std::string(side) + " is negative: a window's times count from the " +
             "step's start, 0 s";
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
  // Both sides read: what is left is their order (the form's "START before END" did not say which
  // side was wrong, nor what to write instead).
  const Time start = start_text.empty() ? Time::zero() : parse_time(start_text);
  const Time end = end_text.empty() ? Time::max() : parse_time(end_text);
  if (end <= start && start_text.empty())
    return "END " + std::string(end_text) + " is not after the step's start, 0 s: the window holds nothing";
  if (end < start)
    return "END " + std::string(end_text) + " is before START " + std::string(start_text) + "; write \"" +
           std::string(end_text) + ":" + std::string(start_text) + "\"";
  if (end == start) return "START and END are both " + format_time(start) + ", a window that holds nothing";
  return {};
}

TimeWindow parse_time_window(std::string_view text) {
  if (const auto w = try_parse_time_window(text)) return *w;
  if (trim(text) == ":")
    throw InputError("time window \"" + std::string(text) +
                     "\": both ends left out, which is the whole step; expected a start, an end or both "
                     "(leave the window out for the whole step)");
  const std::string side = time_window_problem(text);
  throw InputError("time window \"" + std::string(text) + "\": " + (side.empty() ? "" : side + "; ") +
                   "expected " + std::string(kTimeWindowForm));
}

std::string format_time_window(const TimeWindow& window) {
  return format_time(window.start) + ":" +
         (window.end == Time::max() ? std::string() : format_time(window.end));
}

}  // namespace hybridsim::sim
