// A span of simulated time [start, end), and its one text form "START:END" ("2 ms:5 ms"), where
// either side may be empty (":5 ms" starts at 0, "2 ms:" runs to the end of time). Traces, the
// scenario's outputs.trace.window and `--trace-window` read it here.
//   TimeWindow w = parse_time_window("2 ms:5 ms");   // {Time::ms(2), Time::ms(5)}
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "sim/time.h"

namespace hybridsim::sim {

struct TimeWindow {
  Time start = Time::zero();
  Time end = Time::max();
  bool operator==(const TimeWindow&) const = default;
};

// What a window must look like, for error messages.
inline constexpr std::string_view kTimeWindowForm =
    "START:END with times such as \"2 ms:5 ms\" (either side may be empty: \":5 ms\", \"2 ms:\") "
    "and START before END";

// nullopt when the text is not of that form, a time does not parse, START < 0 or START >= END.
std::optional<TimeWindow> try_parse_time_window(std::string_view text);
// Why a window was refused, where the form does not say it: a side's time ("START: unknown unit
// "days" in "5 days"; the time units are ...", a time too large), a START before 0, an END before
// START with the window to write instead ("END 2 ms is before START 5 ms; write "2 ms:5 ms""), or
// both equal; empty otherwise. parse_time_window and the outputs.trace.window key say it.
std::string time_window_problem(std::string_view text);
// Throws InputError "time window "x": expected ..." instead.
TimeWindow parse_time_window(std::string_view text);
// "2 ms:5 ms", "2 ms:" (an open end), exact (parse_time_window(format_time_window(w)) == w).
std::string format_time_window(const TimeWindow& window);

}  // namespace hybridsim::sim
