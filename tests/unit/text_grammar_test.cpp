// The one grammar of each small text form: GPU lists (topology/gpu_list.h), time windows
// (sim/time_window.h), trace detail names (scenarios/loader/trace_settings.h) and the text helpers
// (sim/text.h) that every reader shares.
#include <doctest/doctest.h>

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scenarios/loader/trace_settings.h"
#include "sim/error.h"
#include "sim/text.h"
#include "sim/time_window.h"
#include "topology/gpu_list.h"

using namespace hybridsim;
using sim::Time;

TEST_CASE("GPU lists take ranks and inclusive ranges, a bare number is one GPU") {
  CHECK(topology::parse_gpu_list("0-3,8,12-13") == std::vector<int>{0, 1, 2, 3, 8, 12, 13});
  CHECK(topology::parse_gpu_list(" 5 , 2 ") == std::vector<int>{2, 5});  // sorted
  CHECK_THROWS_WITH_AS(topology::parse_gpu_list(" 5 , 2,2 "), doctest::Contains("GPU 2 is listed twice"),
                       InputError);  // a GPU listed twice is a mistake, not a set
  CHECK(topology::parse_gpu_list("7") == std::vector<int>{7});
  CHECK(topology::parse_gpu_list("4") == std::vector<int>{4});  // GPU 4, not the first four
  for (const char* bad : {"", "3-1", "a", "1,,2", "1-", "-1", "1.5", "0-99999999", "99999999999"}) {
    CAPTURE(bad);
    CHECK_FALSE(topology::try_parse_gpu_list(bad));
    CHECK_THROWS_WITH_AS(topology::parse_gpu_list(bad),
                         doctest::Contains("expected GPU ranks and inclusive ranges"), InputError);
  }
  // Why, where the form alone does not say (issue 31: "7-0" read as if it were no range at all).
  CHECK_THROWS_WITH_AS(
      topology::parse_gpu_list("7-0"),
      "GPU list \"7-0\": the range 7-0's first GPU is after its last: write 0-7; expected GPU "
      "ranks and inclusive ranges separated by commas, such as \"0-3,8,12-15\"",
      InputError);
  CHECK_THROWS_WITH_AS(topology::parse_gpu_list("0-99999999"),
                       doctest::Contains("GPU 99999999 is past 1048576, the largest rank a list may name"),
                       InputError);
  CHECK(topology::format_gpu_list({0, 1, 2, 3, 8, 12, 13}) == "0-3,8,12-13");
  CHECK(topology::format_gpu_list({5}) == "5");
  CHECK_NOTHROW(topology::check_gpus_exist({0, 7}, 8));
  CHECK_THROWS_WITH_AS(topology::check_gpus_exist({0, 8}, 8),
                       "GPU 8 does not exist: the topology has 8 GPUs (0-7)", InputError);
}

TEST_CASE("time windows are START:END with either side optional") {
  const auto w = sim::parse_time_window("2 ms:5 ms");
  CHECK(w.start == Time::ms(2));
  CHECK(w.end == Time::ms(5));
  CHECK(sim::parse_time_window("1.5us:2us").start == Time::ns(1500));
  CHECK(sim::parse_time_window(":5 ms").start == Time::zero());
  CHECK(sim::parse_time_window("2 ms:").end == Time::max());
  // A side's unit the parser does not know is said, naming the side (issue 31).
  CHECK_THROWS_WITH_AS(
      sim::parse_time_window("5 days:"),
      doctest::Contains("\"5 days:\": START: unknown unit \"days\" in \"5 days\"; the time units"),
      InputError);
  CHECK(sim::format_time_window(w) == "2 ms:5 ms");
  CHECK(sim::format_time_window(sim::parse_time_window("2 ms:")) == "2 ms:");
  CHECK_FALSE(sim::try_parse_time_window("1:2"));
  CHECK_THROWS_WITH_AS(sim::parse_time_window("1:2"), doctest::Contains("\"1:2\": START: no unit in \"1\""),
                       InputError);
  CHECK_THROWS_WITH_AS(sim::parse_time_window("1e30 s:"),
                       doctest::Contains("START: time \"1e30 s\" is too large (over 106 days)"), InputError);
  // A window in the wrong order says which side and what to write (issue 31: "5 ms:2 ms" said only the form).
  const std::pair<const char*, const char*> ordered[] = {
      {"5 ms:2 ms", "END 2 ms is before START 5 ms; write \"2 ms:5 ms\"; expected START:END"},
      {"2 ms:2000 us", "START and END are both 2 ms, a window that holds nothing; expected"},
      {":0 s", "END 0 s is not after the step's start, 0 s: the window holds nothing; expected"},
      {"-1 ms:2 ms", "START -1 ms is negative: a window's times count from the step's start, 0 s; expected"},
      {"2 ms:-1 ms", "END -1 ms is negative"}};
  for (const auto& item : ordered) {
    // Not a structured binding: clang (the sanitizer build) does not let CAPTURE's lambda take one.
    const char* bad = item.first;
    const char* why = item.second;
    CAPTURE(bad);
    CHECK_FALSE(sim::try_parse_time_window(bad));
    CHECK_THROWS_WITH_AS(sim::parse_time_window(bad), doctest::Contains(why), InputError);
  }
  for (const char* bad : {"5 ms", "a:b", "1 ms:2 ms:3 ms"}) {
    CAPTURE(bad);
    CHECK_FALSE(sim::try_parse_time_window(bad));
    CHECK_THROWS_WITH_AS(
        sim::parse_time_window(bad),
        ("time window \"" + std::string(bad) + "\": expected START:END with times such as \"2 ms:5 ms\"" +
         " (either side may be empty: \":5 ms\", \"2 ms:\") and START before END")
            .c_str(),
        InputError);
  }
}

TEST_CASE("trace detail names") {
  CHECK(scenarios::parse_trace_detail(" Steps ") == scenarios::TraceDetail::Steps);
  CHECK(scenarios::trace_detail_name(scenarios::TraceDetail::Messages) == "messages");
  CHECK_FALSE(scenarios::find_trace_detail("all"));
}

TEST_CASE("text helpers") {
  CHECK(sim::trim(" \t 2 ms \r\n") == "2 ms");
  CHECK(sim::trim("   ").empty());
  CHECK(sim::lowercase("Fat-Tree µs") == "fat-tree µs");
  const std::string_view three[] = {"a", "b", "c"};
  CHECK(sim::choice_list(three) == "a, b or c");
  CHECK(sim::choice_list(std::span(three).first(2)) == "a or b");
  CHECK(sim::choice_list(std::span(three).first(1)) == "a");
  CHECK(sim::choice_list({}).empty());
  CHECK(sim::parse_whole<int>("42") == 42);
  CHECK(sim::parse_whole<int>("-3") == -3);
  CHECK_FALSE(sim::parse_whole<int>("4x"));
  CHECK_FALSE(sim::parse_whole<int>(""));
  CHECK_FALSE(sim::parse_whole<int>("99999999999"));  // beyond int
}
