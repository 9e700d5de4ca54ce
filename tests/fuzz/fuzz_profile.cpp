// Fuzz target: profile files (format hybridsim-profile/1).
#include "tests/fuzz/fuzz_target.h"
#include "workloads/profile/profile_io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hybridsim;
  return fuzz::refused_or_parsed(
      [&] { (void)workloads::parse_profile(fuzz::text(data, size), "fuzz.yaml"); });
}
