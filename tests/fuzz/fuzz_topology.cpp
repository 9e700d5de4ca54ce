// Fuzz target: custom topology files (topology/yaml_loader).
#include "tests/fuzz/fuzz_target.h"
#include "topology/yaml_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hybridsim;
  return fuzz::refused_or_parsed(
      [&] { (void)topology::parse_topology_yaml(fuzz::text(data, size), "fuzz.yaml"); });
}
