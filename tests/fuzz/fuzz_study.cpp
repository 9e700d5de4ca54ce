// Fuzz target: study files (format hybridsim-study/1).
#include "analysis/study/study_config.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hybridsim;
  return fuzz::refused_or_parsed(
      [&] { (void)analysis::parse_study_config(fuzz::text(data, size), "fuzz.yaml", "."); });
}
