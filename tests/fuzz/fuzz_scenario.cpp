// Fuzz target: scenario files (scenarios/loader), including their sweep blocks.
#include "scenarios/loader/scenario.h"
#include "scenarios/loader/sweep.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hybridsim;
  return fuzz::refused_or_parsed([&] {
    const scenarios::Scenario s = scenarios::parse_scenario(fuzz::text(data, size), "fuzz.yaml");
    if (!s.sweep.parameters.empty()) (void)scenarios::expand_sweep(s);
  });
}
