// Cost growth against GPU count (issue 14): wall time, peak heap, events and messages of
//  - BM_DpStep: one GNMT data-parallel step on N / 8 DGX-1 machines (EDR InfiniBand fat tree), as
//    `hybridsim run scenarios/examples/dgx1-gnmt-dp8.yaml --set cluster.nodes=N/8
//    --set parallelism.dp=N --set communication.fast_path=bounded` runs it (load, resolve, run);
//  - BM_DgxRingAllReduce: one 1 GiB ring all-reduce over the same N GPUs, as `hybridsim collective
//    -t dgx1-v100 -n N/8 -b 1GiB -e 1GiB -a ring` runs it (the cluster built, then the sweep of one
//    size, its budget check included).
//  - BM_IdealRingAllReduce: the same all-reduce on the `ideal-ring` preset of N GPUs (one machine,
//    25 GB/s Generic links), as `hybridsim collective -t ideal-ring --gpus-per-node N --protocol
//    ideal -a ring -b 1GiB -e 1GiB` runs it: the ring search and routes over N GPUs, then one folded
//    position (issue 31: under 2 s and 200 MB at N = 65,536; it took 3.2 GB at 16,384 when the ring
//    search kept an N × N matrix). N = 2,048 ... 65,536.
//  - BM_ZeroStep: Llama 2 7B under ZeRO-1 and ZeRO-3 on 8 DGX A100 (scenarios/llm), only when asked;
//  - BM_ClusterStep: issue 30's GNMT step of scenarios/cluster-hybrid-vs-dp.yaml on N / 8 DGX-1, DP
//    and dp × mp 2, at N = 1,024 and 65,536 (target: under 30 s and 4 GB each at 65,536);
//    BM_ClusterStepH100 on N / 8 DGX H100 (rail-optimised NDR).
// The idealized ring of issue 14 (50 GB/s, 500 ns, 256 KiB messages) is bench_collective's
// BM_RingAllReduce.
//
// N = 128, 256, ..., 16,384. Without --benchmark_filter (or BENCHMARK_FILTER) only N <= 2,048 run
// (kDefaultFilter, a few seconds); `--benchmark_filter=.` runs them all, `--benchmark_filter=/gpus:16384`
// the largest. `peak_heap_mb`: the most bytes held through operator new at once during the case, above
// what was held as it started (counted by the replacement operators below, per allocation's usable
// size; memory malloc'ed directly by C libraries is not seen). README's "Cost growth" table comes from
// `--benchmark_format=json` through `tests/bench/readme_tables.py scale`.
#include <benchmark/benchmark.h>
#include "tests/paths/paths.h"
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "analysis/cli/huge_pages.h"
#include "analysis/collective/collective_sweep.h"
#include "analysis/platform/platform.h"
#include "analysis/run/scenario_run.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/scenario.h"

using namespace hybridsim;

namespace {

// The heap count. Global by necessity: operator new and delete are global functions.
std::atomic<std::int64_t> g_live_bytes{0};
std::atomic<std::int64_t> g_peak_bytes{0};

void note_allocated(void* p) {
  if (p == nullptr) return;
  const auto n = static_cast<std::int64_t>(malloc_usable_size(p));
  const std::int64_t live = g_live_bytes.fetch_add(n, std::memory_order_relaxed) + n;
  std::int64_t peak = g_peak_bytes.load(std::memory_order_relaxed);
  while (live > peak && !g_peak_bytes.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
}

void free_noted(void* p) noexcept {
  if (p == nullptr) return;
  g_live_bytes.fetch_sub(static_cast<std::int64_t>(malloc_usable_size(p)), std::memory_order_relaxed);
  std::free(p);
}

void* allocate(std::size_t n, std::size_t alignment) noexcept {
  void* p = nullptr;
  if (alignment <= alignof(std::max_align_t)) p = std::malloc(n == 0 ? 1 : n);
  else if (posix_memalign(&p, std::max(alignment, sizeof(void*)), n == 0 ? 1 : n) != 0) p = nullptr;
  note_allocated(p);
  return p;
}

void* allocate_or_throw(std::size_t n, std::size_t alignment) {
  void* p = allocate(n, alignment);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

// Peak heap of one case: the peak restarts at what is live as the case begins.
class HeapPeak {
 public:
  HeapPeak() : base_(g_live_bytes.load()) { g_peak_bytes.store(base_); }
  double megabytes() const { return static_cast<double>(g_peak_bytes.load() - base_) / 1e6; }

 private:
  std::int64_t base_;
};

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string count(std::int64_t n) { return std::to_string(n); }

// One step of the scenario at `path` with `sets`, as `hybridsim run` runs it (load, resolve, run).
void step_case(benchmark::State& state, const std::string& path, const std::vector<std::string>& sets,
               std::int64_t gpus) {
  const HeapPeak heap;
  analysis::StepResult r;
  double setup_s = 0, simulate_s = 0;
  for (auto _ : state) {
    const Clock::time_point start = Clock::now();
    const scenarios::Scenario scenario = scenarios::load_scenario(path, sets);
    const scenarios::ResolvedScenario resolved = scenarios::resolve(scenario);
    setup_s = seconds_since(start);
    const Clock::time_point run_start = Clock::now();
    r = analysis::run_scenario(resolved, {}).step;
    simulate_s = seconds_since(run_start);
  }
  state.counters["gpus"] = static_cast<double>(gpus);
  state.counters["step_ms"] = r.step_time.to_ms();
  state.counters["events"] = static_cast<double>(r.events);
  state.counters["messages"] = static_cast<double>(r.messages);
  state.counters["gpus_simulated"] = r.simulation.gpus_simulated == 0 ? static_cast<double>(gpus)
                                                                      : r.simulation.gpus_simulated;
  state.counters["folded"] = static_cast<double>(r.simulation.folded);
  state.counters["collectives"] = static_cast<double>(r.collectives);
  state.counters["setup_s"] = setup_s;
  state.counters["simulate_s"] = simulate_s;
  state.counters["peak_heap_mb"] = heap.megabytes();
}

void BM_DpStep(benchmark::State& state) {
  const std::int64_t gpus = state.range(0);
  step_case(state, HYBRIDSIM_SOURCE_DIR + "/scenarios/examples/dgx1-gnmt-dp8.yaml",
            {"cluster.nodes=" + count(gpus / 8), "parallelism.dp=" + count(gpus),
             "communication.fast_path=bounded"},
            gpus);
}

// Issue 30's 65,536 GPUs: one GNMT step on N / 8 DGX-1 (EDR fat tree), DP (mp 1) or dp N/2 × mp 2,
// as `hybridsim run scenarios/cluster-hybrid-vs-dp.yaml --set cluster.nodes=N/8 --set
// parallelism="{dp: N/mp, mp: mp}"` runs it, every other setting at the scenario's or its default.
void BM_ClusterStep(benchmark::State& state) {
  const std::int64_t gpus = state.range(0), mp = state.range(1);
  step_case(state, HYBRIDSIM_SOURCE_DIR + "/scenarios/cluster-hybrid-vs-dp.yaml",
            {"cluster.nodes=" + count(gpus / 8),
             "parallelism={dp: " + count(gpus / mp) + ", mp: " + count(mp) + "}"},
            gpus);
}

// The same on N / 8 DGX H100 on the NDR rail-optimised fabric (`--set cluster.preset=dgx-h100 --set
// cluster.fabric=rail-optimized`). A DP ring's channels fold together (sim/README.md, "Rings that
// share links"); dp x mp 2 runs in full (README, "Where this does not reach yet"), so it is not here.
void BM_ClusterStepH100(benchmark::State& state) {
  const std::int64_t gpus = state.range(0), mp = state.range(1);
  step_case(state, HYBRIDSIM_SOURCE_DIR + "/scenarios/cluster-hybrid-vs-dp.yaml",
            {"cluster.preset=dgx-h100", "cluster.fabric=rail-optimized", "cluster.nodes=" + count(gpus / 8),
             "parallelism={dp: " + count(gpus / mp) + ", mp: " + count(mp) + "}"},
            gpus);
}

// One step of Llama 3 70B at tp 8 on N / 8 DGX H100 (dp N / 8), as `hybridsim run
// scenarios/llm/llama3-70b-1024-h100.yaml --set cluster.nodes=N/8 --set parallelism.dp=N/8` runs it
// (issue 28: under 10 s and 2 GB at N = 1,024).
void BM_TpDpStep(benchmark::State& state) {
  const std::int64_t gpus = state.range(0);
  step_case(state, HYBRIDSIM_SOURCE_DIR + "/scenarios/llm/llama3-70b-1024-h100.yaml",
            {"cluster.nodes=" + count(gpus / 8), "parallelism.dp=" + count(gpus / 8)}, gpus);
  if (state.counters["gpus_simulated"] != 8) state.SkipWithError("the step did not fold onto one machine");
}

// One step of Llama 2 7B under ZeRO stage `zero` on N / 8 DGX A100 (dp N), as `hybridsim run
// scenarios/llm/llama2-7b-zero3-dgx-a100.yaml --set cluster.nodes=N/8 --set parallelism.dp=N --set
// parallelism.zero=Z` runs it. It does not fold yet (README, "Where this does not reach yet"): every
// GPU is simulated, so only N = 64, the scenario's own, runs, and only when asked
// (`--benchmark_filter=BM_ZeroStep`).
void BM_ZeroStep(benchmark::State& state) {
  const std::int64_t gpus = state.range(0);
  step_case(state, HYBRIDSIM_SOURCE_DIR + "/scenarios/llm/llama2-7b-zero3-dgx-a100.yaml",
            {"cluster.nodes=" + count(gpus / 8), "parallelism.dp=" + count(gpus),
             "parallelism.zero=" + count(state.range(1))},
            gpus);
}
// Issue 29: one step of GPT-3 175B, all 96 layers, at tp 8 x pp 16 x dp 128 under 1F1B on
// N / 8 machines (`preset`: DGX H100 or DGX A100), micro-batch 1 and the global batch of 1,536
// sequences (GPT-3's 3.2 M tokens, Brown et al. 2020; ../shared/reference/transformers.md), so 12
// micro-batches per replica; as `hybridsim run scenarios/llm/gpt3-175b-pp8-dgx-a100.yaml --set
// cluster.preset=P --set cluster.nodes=N/8 --set parallelism.dp=N/128 --set parallelism.pp=16 --set
// workload.model.layers_simulated=96 --set training.global_batch=1536 --set
// communication.algorithm=ring --set cluster.fabric=rail-optimized` runs it (target: under 10 s and 2 GB
// at N = 16,384). Transfers and rings that share spine links fold (analysis/step/step_fold_p2p.h).
void pipeline_step(benchmark::State& state, const char* preset) {
  const std::int64_t gpus = state.range(0);
  step_case(state, HYBRIDSIM_SOURCE_DIR + "/scenarios/llm/gpt3-175b-pp8-dgx-a100.yaml",
            {std::string("cluster.preset=") + preset, "cluster.nodes=" + count(gpus / 8),
             "cluster.fabric=rail-optimized",
             "parallelism.dp=" + count(gpus / 128), "parallelism.pp=16", "workload.model.layers_simulated=96",
             "training.global_batch=" + count(gpus / 128 * 12), "communication.algorithm=ring"},
            gpus);
  if (state.counters["gpus_simulated"] != 128) state.SkipWithError("the step did not fold onto one replica");
}
void BM_PipelineStepH100(benchmark::State& state) { pipeline_step(state, "dgx-h100"); }
void BM_PipelineStepA100(benchmark::State& state) { pipeline_step(state, "dgx-a100"); }

// One 1 GiB ring all-reduce over the first `gpus` GPUs of `spec`, as `hybridsim collective -b 1GiB -e
// 1GiB -a ring` runs it (the cluster built, then the sweep of one size, its budget check included).
void ring_all_reduce_case(benchmark::State& state, const topology::ClusterSpec& spec, int gpus,
                          std::optional<sim::Protocol> protocol) {
  const HeapPeak heap;
  analysis::CollectiveSweepRow row;
  double setup_s = 0, simulate_s = 0;
  for (auto _ : state) {
    const Clock::time_point start = Clock::now();
    const topology::Topology topo = analysis::load_platform(spec.preset, spec);
    analysis::CollectiveSweepOptions o;  // the CLI's defaults, but for these:
    o.comm.algorithm = workloads::AllReduceAlgorithm::Ring;
    o.comm.protocol = protocol;
    for (int g = 0; g < gpus; ++g) o.gpus.push_back(g);
    o.min_bytes = o.max_bytes = sim::Bytes::gib(1);
    setup_s = seconds_since(start);
    const Clock::time_point run_start = Clock::now();
    row = analysis::run_collective_sweep(topo, o).front();
    simulate_s = seconds_since(run_start);
  }
  state.counters["gpus"] = gpus;
  state.counters["allreduce_ms"] = row.time.to_ms();
  state.counters["channels"] = row.channels;
  state.counters["events"] = static_cast<double>(row.events);
  state.counters["messages"] = static_cast<double>(row.messages);
  state.counters["folded"] = row.path.folded ? 1 : 0;
  state.counters["positions_simulated"] = row.path.folded ? row.path.simulated : gpus;
  state.counters["setup_s"] = setup_s;
  state.counters["simulate_s"] = simulate_s;
  state.counters["peak_heap_mb"] = heap.megabytes();
}

void BM_DgxRingAllReduce(benchmark::State& state) {
  const auto gpus = static_cast<int>(state.range(0));
  topology::ClusterSpec spec;
  spec.preset = "dgx1-v100";
  spec.nodes = gpus / 8;
  ring_all_reduce_case(state, spec, gpus, std::nullopt);
}

void BM_IdealRingAllReduce(benchmark::State& state) {
  const auto gpus = static_cast<int>(state.range(0));
  topology::ClusterSpec spec;
  spec.preset = "ideal-ring";
  spec.gpus_per_node = gpus;
  ring_all_reduce_case(state, spec, gpus, sim::Protocol::Ideal);
  if (state.counters["folded"] == 0) state.SkipWithError("the ideal ring did not fold");
}

void gpu_counts(benchmark::internal::Benchmark* b) {
  b->ArgName("gpus");
  for (int gpus = 128; gpus <= 16384; gpus *= 2) b->Arg(gpus);
  b->Unit(benchmark::kSecond)->Iterations(1);
}
BENCHMARK(BM_DpStep)->Apply(gpu_counts);
BENCHMARK(BM_DgxRingAllReduce)->Apply(gpu_counts);
BENCHMARK(BM_TpDpStep)->ArgName("gpus")->Arg(128)->Arg(1024)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_ZeroStep)
    ->ArgNames({"gpus", "zero"})
    ->Args({64, 1})
    ->Args({64, 3})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
BENCHMARK(BM_PipelineStepH100)->ArgName("gpus")->Arg(16384)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_PipelineStepA100)->ArgName("gpus")->Arg(16384)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_ClusterStep)
    ->ArgNames({"gpus", "mp"})
    ->Args({1024, 1})
    ->Args({1024, 2})
    ->Args({65536, 1})
    ->Args({65536, 2})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
BENCHMARK(BM_ClusterStepH100)
    ->ArgNames({"gpus", "mp"})
    ->Args({1024, 1})
    ->Args({65536, 1})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
BENCHMARK(BM_IdealRingAllReduce)
    ->ArgName("gpus")
    ->Arg(2048)
    ->Arg(16384)
    ->Arg(65536)
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

// What runs when no filter is given: the cases up to 2,048 GPUs.
constexpr const char* kDefaultFilter = "--benchmark_filter=/gpus:(128|256|512|1024|2048)/";

}  // namespace

// Replaceable allocation functions ([new.delete]): every form, so that none escapes the count.
void* operator new(std::size_t n) { return allocate_or_throw(n, 0); }
void* operator new[](std::size_t n) { return allocate_or_throw(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) {
  return allocate_or_throw(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return allocate_or_throw(n, static_cast<std::size_t>(a));
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return allocate(n, 0); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return allocate(n, 0); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept { free_noted(p); }
void operator delete[](void* p) noexcept { free_noted(p); }
void operator delete(void* p, std::size_t) noexcept { free_noted(p); }
void operator delete[](void* p, std::size_t) noexcept { free_noted(p); }
void operator delete(void* p, std::align_val_t) noexcept { free_noted(p); }
void operator delete[](void* p, std::align_val_t) noexcept { free_noted(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { free_noted(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { free_noted(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { free_noted(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { free_noted(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { free_noted(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { free_noted(p); }

int main(int argc, char** argv) {
  hybridsim::cli::use_huge_pages(argv);  // as the hybridsim command (and tests/bench/main.cpp)
  std::vector<char*> args(argv, argv + argc);
  const bool filtered = std::getenv("BENCHMARK_FILTER") != nullptr ||
                        std::any_of(args.begin(), args.end(), [](const char* a) {
                          return std::string(a).starts_with("--benchmark_filter");
                        });
  std::string default_filter = kDefaultFilter;
  if (!filtered) args.push_back(default_filter.data());
  int arg_count = static_cast<int>(args.size());
  benchmark::Initialize(&arg_count, args.data());
  if (benchmark::ReportUnrecognizedArguments(arg_count, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
