// Fuzz target: PyTorch profiler (Kineto) traces, read as a stream, then imported.
#include <sstream>
#include <string>

#include "tests/fuzz/fuzz_target.h"
#include "workloads/import/import_kineto.h"
#include "workloads/import/import_kineto_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hybridsim;
  return fuzz::refused_or_parsed([&] {
    std::istringstream in{std::string(fuzz::text(data, size))};
    const workloads::KinetoTrace trace = workloads::parse_kineto_trace(in, "fuzz.json");
    (void)workloads::import_kineto(trace, {});
  });
}
