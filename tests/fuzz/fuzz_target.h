// The one rule every reader's fuzz target checks (libFuzzer, clang's -fsanitize=fuzzer): any input
// either parses or is refused with an InputError. Any other exception, a crash, a sanitizer report,
// a leak, a timeout or more than the RSS limit is a finding (tests/fuzz/run_fuzzers.sh).
//   extern "C" int LLVMFuzzerTestOneInput(const uint8_t* d, size_t n) {
//     return hybridsim::fuzz::refused_or_parsed([&] { parse_x(hybridsim::fuzz::text(d, n)); });
//   }
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "sim/error.h"

namespace hybridsim::fuzz {

inline std::string_view text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

template <class F>
int refused_or_parsed(F&& parse) {
  try {
    parse();
  } catch (const InputError&) {
    // A located, clear refusal: what bad input must get.
  } catch (const std::exception& e) {
    std::fprintf(stderr, "finding: not an InputError: %s\n", e.what());
    std::abort();
  }
  return 0;
}

}  // namespace hybridsim::fuzz
