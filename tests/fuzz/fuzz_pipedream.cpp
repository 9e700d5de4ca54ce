// Fuzz target: PipeDream profiler graphs, parsed and imported.
#include "tests/fuzz/fuzz_target.h"
#include "workloads/import/import_pipedream.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hybridsim;
  return fuzz::refused_or_parsed([&] {
    const auto graph = workloads::parse_pipedream_graph(fuzz::text(data, size), "fuzz.txt");
    (void)workloads::import_pipedream(graph, {});
  });
}
