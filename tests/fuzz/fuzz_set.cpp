// Fuzz target: `--set path=value` overrides, applied to a small valid scenario.
#include <string>
#include <vector>

#include "scenarios/loader/scenario.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hybridsim;
  static constexpr std::string_view kBase =
      "cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\nparallelism: {dp: 4, mp: 2}\n";
  const std::vector<std::string> sets = {std::string(fuzz::text(data, size))};
  return fuzz::refused_or_parsed([&] { (void)scenarios::parse_scenario(kBase, "base.yaml", sets); });
}
