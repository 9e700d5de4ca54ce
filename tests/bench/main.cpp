// The benchmarks' main (Google Benchmark's BENCHMARK_MAIN, after one call): they start as the
// hybridsim command does, re-executed once with glibc's malloc on transparent huge pages
// (analysis/cli/huge_pages.h; off under Valgrind and with HYBRIDSIM_NO_HUGE_PAGES), so that their
// figures at tens of thousands of GPUs are the command's. A benchmark with a main of its own
// (bench_scale.cpp) calls the same function first; the linker then leaves this one out.
#include <benchmark/benchmark.h>

#include "analysis/cli/huge_pages.h"

int main(int argc, char** argv) {
  hybridsim::cli::use_huge_pages(argv);  // re-executes once, before anything else happens
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
