// Step traces written by simulate_step_with_trace, parsed back with nlohmann-json: processes and
// threads, kernels adding up to the run's compute time, collectives with nested ring steps, flows
// from send to receive, link messages and utilization counters, size control, interrupted runs.
#include <doctest/doctest.h>

#include <cmath>
#include <set>

#include "analysis/trace/step_trace.h"
#include "analysis_step_trace_check.h"
#include "sim/error.h"
#include "sim/time_window.h"
#include "topology/gpu_list.h"
#include "topology/preset_registry.h"
#include "topology/presets.h"

using namespace hybridsim;
using namespace step_trace_test;
using sim::Bytes;
using sim::Time;

namespace {

// A chain of n ops, each 1 ms forward, 2 ms backward, 4 MiB of gradients, 1 MiB of activations;
// the optimizer takes 1024 µs per GiB, so 4 µs per op: every kernel is a whole number of ns, and
// rounding to ns loses nothing.
workloads::Profile chain(int n) {
  workloads::Profile p;
  p.meta.network = "toy";
  p.meta.batch_per_gpu = 32;
  p.meta.units_per_step = 32;
  p.meta.throughput_unit = "samples";
  p.optimizer = {"sgd", Time::us(1024)};
  for (int i = 0; i < n; ++i) {
    workloads::Op op;
    op.name = "op" + std::to_string(i);
    op.layer = "layer" + std::to_string(i);
    if (i > 0) op.inputs = {static_cast<std::uint32_t>(i - 1)};
    op.forward = {{"f", Time::ms(1)}};
    op.backward = {{"b", Time::ms(2)}};
    op.activation_bytes = Bytes::mib(1);
    op.gradient_bytes = Bytes::mib(4);
    op.exchange = workloads::GradientExchange::DenseAllReduce;
    p.ops.push_back(std::move(op));
  }
  workloads::validate_profile(p);
  return p;
}

// dp × mp on a fully connected box: worker w uses GPUs w·mp … w·mp + mp − 1; op i of n sits on
// MP rank i·mp/n (consecutive layers per GPU).
struct Toy {
  workloads::Profile profile;
  topology::Topology topology;
  analysis::StepSetup setup;
  Toy(int ops, int dp, int mp, Bytes bucket)
      : profile(chain(ops)), topology(topology::presets::fully_connected({.gpus = dp * mp})) {
    setup.profile = &profile;
    setup.topology = &topology;
    setup.placement.mp = mp;
    for (int i = 0; i < ops; ++i)
      setup.placement.gpu_of_op.push_back(static_cast<std::uint32_t>(i * mp / ops));
    std::vector<std::vector<int>> workers(static_cast<std::size_t>(dp));
    for (int w = 0; w < dp; ++w)
      for (int k = 0; k < mp; ++k) workers[static_cast<std::size_t>(w)].push_back(w * mp + k);
    setup.mapping = workloads::custom_mapping(topology, dp, mp, workers);
    setup.step.bucket_size = bucket;
  }
};

struct Written {
  analysis::StepResult result;
  analysis::StepTraceSummary summary;
  Trace trace;
};

Written write(const Toy& toy, const fs::path& path, const analysis::StepTraceOptions& options = {}) {
  Written w;
  w.result = analysis::simulate_step_with_trace(toy.setup, path, options, &w.summary);
  CHECK(w.summary.path == path);
  CHECK(w.summary.bytes == static_cast<std::int64_t>(fs::file_size(path)));
  w.trace = check_trace(options.gzip ? read_gzip_file(path) : read_whole_file(path));
  CHECK(w.summary.events == w.trace.events);
  return w;
}

}  // namespace

TEST_CASE("step trace: a process per GPU, a thread per stream, kernels add up to compute time") {
  // dp 2 × mp 2: ops 0-1 on MP rank 0 (GPUs 0 and 2), ops 2-3 on MP rank 1 (GPUs 1 and 3); one
  // gradient bucket per MP rank (8 MiB) all-reduced between the two workers.
  const Toy toy(4, 2, 2, Bytes::gib(1));
  TempDir dir;
  const Written w = write(toy, dir.path / "step.json");
  const Trace& t = w.trace;

  // GPU r is pid r + 1, named for where it sits and sorted by rank; the network comes last.
  for (int g = 0; g < 4; ++g) {
    CHECK(t.process_names.at(g + 1) == "GPU " + std::to_string(g) + " · node 0");
    CHECK(t.process_sort.at(g + 1) == g);
  }
  CHECK(t.process_names.at(5) == "network");
  CHECK(t.process_sort.at(5) == 4);
  CHECK(t.thread_names.at({1, 1}) == "compute");
  CHECK(t.thread_names.at({1, 2}) == "communication");
  CHECK(t.thread_names.at({1, 3}) == "send→GPU1");
  CHECK(t.thread_names.at({1, 4}) == "recv←GPU1");

  for (const auto& g : w.result.per_gpu) {
    const auto& compute = t.on(g.gpu + 1, 1);
    // Each GPU runs two ops: 2 × (1 ms forward + 2 ms backward), then the optimizer over its 8 MiB
    // of parameters, 8 µs: 5 kernels and 6.008 ms, which is also the run's compute time.
    CHECK(compute.size() == 5);
    CHECK(busy_ns(compute) == 6'008'000);
    CHECK(busy_ns(compute) * 1000 == g.compute.ps());
  }
  const Slice& first = t.on(1, 1).front();
  CHECK(first.name == "op0 · f");
  CHECK(first.cat == "forward");
  CHECK(first.ts == 0);
  CHECK(first.dur == 1'000'000);
  CHECK(first.args["op"] == "op0");
  CHECK(first.args["layer"] == "layer0");
  CHECK(first.args["phase"] == "forward");
  CHECK(first.args["activation_bytes"] == 1'048'576);
  CHECK(first.args["gradient_bytes"] == 4'194'304);
  const Slice& last = t.on(1, 1).back();
  CHECK(last.name == "optimizer · sgd");
  CHECK(last.args["parameter_bytes"] == 8'388'608);
  CHECK(t.on(1, 1)[2].name == "op1 · b (bwd)");

  // One all-reduce per GPU on its communication stream: 8 MiB = 8.39 MB over the 2 workers.
  for (int g = 0; g < 4; ++g) {
    const auto& comm = t.on(g + 1, 2);
    REQUIRE(comm.size() == 1);
    CHECK(comm[0].name == "all-reduce bucket 0 · 8.39 MB · 2 GPUs · ring");
    CHECK(comm[0].args["bytes"] == 8'388'608);
    CHECK(comm[0].args["last_op"] == (g % 2 == 0 ? "op0" : "op2"));
  }

  // Model parallelism: op1's activation goes GPU 0 → 1 (and 2 → 3), its gradient comes back:
  // 2 transfers per worker, each a send slice, a wait and a transfer slice on the receiver, and a
  // flow arrow from the send to the transfer.
  // The send starts when GPU 0 has run op0 and op1 forward (2 × 1 ms) and takes 1 MiB / 25 GB/s =
  // 41.943 µs plus the link's 1 µs latency: 42.943 µs. GPU 1's receive stream waits from 0 to 2 ms.
  CHECK(t.on(1, 3).size() == 1);
  const Slice& send = t.on(1, 3)[0];
  CHECK(send.name == "activation op1 → GPU 1");
  CHECK(send.ts == 2'000'000);
  CHECK(send.dur == 42'943);
  REQUIRE(t.on(2, 4).size() == 2);
  const Slice& wait = t.on(2, 4)[0];
  const Slice& transfer = t.on(2, 4)[1];
  CHECK(wait.name == "waiting for activation op1 ← GPU 0");
  CHECK(wait.cat == "wait");
  CHECK(wait.ts == 0);
  CHECK(wait.end() == 2'000'000);
  CHECK(transfer.name == "activation op1 ← GPU 0");
  CHECK(transfer.ts == send.ts);  // the data moves from the send's start
  CHECK(transfer.end() == send.end());
  // GPU 1 then runs op2 and op3 forward (2 ms) and backward (4 ms): the gradient leaves at
  // 2.042943 + 6 = 8.042943 ms, which GPU 0's receive stream waits for from the start.
  CHECK(t.on(2, 3)[0].name == "activation gradient op1 → GPU 0");
  CHECK(t.on(2, 3)[0].ts == 8'042'943);
  REQUIRE(t.on(1, 4).size() == 2);
  CHECK(t.on(1, 4)[0].name == "waiting for activation gradient op1 ← GPU 1");
  CHECK(t.on(1, 4)[0].dur == 8'042'943);
  CHECK(t.on(1, 4)[1].name == "activation gradient op1 ← GPU 1");
  CHECK(t.on(1, 4)[1].dur == 42'943);
  CHECK(t.flows == 4);

  // Each GPU's memory counter, from the memory model (workloads/memory/memory_model.h). GPU 0 (MP rank 0,
  // op0 and op1, dp 2) holds for the whole step: weights 8 MiB, dense gradients 8 MiB, SGD's momentum
  // 2 Mi parameters × 4 B = 8 MiB, DDP's bucket copy 8 MiB, NCCL's buffers 6 channels × 4
  // connections (auto) × 9,633,792 B = 231,211,008 B and the 1 GiB framework allowance:
  // P = 32 MiB + 1 GiB + 231,211,008 B = 1,338,507,264 B. Above P, in MiB: op0's forward 1 (its
  // output), op1's forward 2 (both outputs), op1's backward 4 (both outputs and both output
  // gradients: op1's own, since its consumer is on GPU 1, and op0's, produced here), op0's backward
  // 2 (its output and gradient), the optimizer 0, and P again after it. P is not written at the
  // start: op0's forward starts at 0, and one sample per time is all a counter track shows.
  {
    const auto& memory = t.counters.at({1, "memory"});
    std::vector<std::int64_t> above;
    for (const auto& s : memory) above.push_back(std::llround(s.value * 1'073'741'824.0) - 1'338'507'264);
    const std::int64_t mib = 1'048'576;
    CHECK(above == std::vector<std::int64_t>{1 * mib, 2 * mib, 4 * mib, 2 * mib, 0, 0});
    CHECK(memory[0].ts == 0);
    CHECK(memory[1].ts == 1'000'000);          // op1's forward starts at 1 ms
    CHECK(memory[2].ts == t.on(1, 1)[2].ts);   // op1's backward
    CHECK(memory.back().ts == t.on(1, 1).back().end());  // after the optimizer
    for (int g = 1; g <= 4; ++g) {
      const auto& track = t.counters.at({g, "memory"});
      for (std::size_t i = 1; i < track.size(); ++i)
        CHECK(track[i - 1].ts < track[i].ts);  // no two at one time
    }
    // GPU 1 (MP rank 1) waits for op1's output: it holds its persistent parts from 0 until op2 starts.
    const auto& second = t.counters.at({2, "memory"});
    REQUIRE(second.size() >= 2);
    CHECK(second[0].ts == 0);
    CHECK(second[1].ts > 0);
    CHECK(second[0].value == doctest::Approx(second.back().value));
  }

  // Utilization counters of the links that carried traffic: fractions, back to 0 at the end.
  int counters = 0;
  for (const auto& [key, samples] : t.counters) {
    if (key.second == "memory") continue;
    CHECK(key.first == 5);
    ++counters;
    for (const auto& s : samples) {
      CHECK(s.value >= 0.0);
      CHECK(s.value <= 1.0);
      CHECK(s.ts % 100'000 == 0);  // on the 100 µs bins
    }
    CHECK(samples.back().value == 0.0);
  }
  CHECK(counters > 0);
  // No link threads below the highest detail.
  for (const auto& [thread, name] : t.thread_names) CHECK(thread.first != 5);

  const json& other = t.doc["otherData"];
  CHECK(other["strategy"] == "dp 2 × mp 2 = 4 GPUs");
  CHECK(other["topology"] == toy.topology.name());
  CHECK(other["profile"] == "toy");
  CHECK(other["detail"] == "kernels");
  CHECK(other["utilization_bin"] == "100 us");
  CHECK(other["step_time"] == sim::format_time(w.result.step_time));
  CHECK(other.contains("scenario"));
}

TEST_CASE("step trace: ring steps nest inside each all-reduce at detail steps") {
  // dp 4, two ops, 4 MiB buckets: two all-reduces per GPU over a ring of 4, each 2(4 − 1) = 6
  // steps: 3 of reduce-scatter, then 3 of all-gather.
  const Toy toy(2, 4, 1, Bytes::mib(4));
  TempDir dir;
  analysis::StepTraceOptions options;
  options.detail = analysis::TraceDetail::Steps;
  const Written w = write(toy, dir.path / "steps.json", options);
  const std::vector<std::string> expected = {"reduce-scatter step 1/3", "reduce-scatter step 2/3",
                                             "reduce-scatter step 3/3", "all-gather step 1/3",
                                             "all-gather step 2/3", "all-gather step 3/3"};
  for (int g = 0; g < 4; ++g) {
    const auto& comm = w.trace.on(g + 1, 2);
    std::vector<std::string> buckets, steps;
    std::int64_t step_end = 0;
    for (const Slice& s : comm) {
      if (s.depth == 0) {
        buckets.push_back(s.name);
        CHECK(s.cat == "collective");
        continue;
      }
      CHECK(s.depth == 1);
      CHECK(s.cat == "ring-step");
      CHECK(s.parent == buckets.back());
      CHECK(s.args["ring_ranks"] == 4);
      CHECK(s.ts >= step_end);  // steps follow each other
      step_end = s.end();
      steps.push_back(s.name);
    }
    CHECK(buckets == std::vector<std::string>{"all-reduce bucket 0 · 4.19 MB · 4 GPUs · ring",
                                              "all-reduce bucket 1 · 4.19 MB · 4 GPUs · ring"});
    std::vector<std::string> twice = expected;
    twice.insert(twice.end(), expected.begin(), expected.end());
    CHECK(steps == twice);
  }
}

TEST_CASE("step trace: link messages never overlap and add up to the utilization counters") {
  const Toy toy(4, 2, 2, Bytes::mib(4));
  TempDir dir;
  analysis::StepTraceOptions options;
  options.detail = analysis::TraceDetail::Messages;
  const Written w = write(toy, dir.path / "messages.json", options);
  const Trace& t = w.trace;
  std::set<std::string> link_names;
  for (const auto& l : toy.topology.links().all()) link_names.insert(l.name);
  std::int64_t bytes = 0;
  int links = 0;
  for (const auto& [thread, name] : t.thread_names) {
    if (thread.first != 5) continue;
    ++links;
    CHECK(link_names.count(name) == 1);  // a thread per directed link, named as the topology does
    const auto& messages = t.on(5, thread.second);
    REQUIRE(!messages.empty());
    for (const Slice& m : messages) {
      CHECK(m.depth == 0);  // a FIFO link: one message at a time
      bytes += m.args["bytes"].get<std::int64_t>();
    }
    // The counter's integral (fraction × time to the next sample) is the link's busy time, up to
    // 1 ns of rounding per message slice.
    const auto& samples = t.counters.at({5, name});
    double busy = 0;
    for (std::size_t i = 0; i + 1 < samples.size(); ++i)
      busy += samples[i].value * static_cast<double>(samples[i + 1].ts - samples[i].ts);
    CHECK(std::abs(busy - static_cast<double>(busy_ns(messages))) <=
          static_cast<double>(messages.size()) + 1e-6);
  }
  CHECK(links > 0);
  // Every hop of every message: the payload times the links it crossed, as the run counts it.
  std::int64_t expected = 0;
  for (const Bytes b : w.result.bytes_by_link_kind) expected += b.count();
  CHECK(bytes == expected);
}

TEST_CASE("step trace: detail, GPU filter, window and gzip control the size") {
  const Toy toy(4, 2, 2, Bytes::mib(4));
  TempDir dir;
  using analysis::TraceDetail;
  const Written kernels = write(toy, dir.path / "k.json", {.detail = TraceDetail::Kernels});
  const Written steps = write(toy, dir.path / "s.json", {.detail = TraceDetail::Steps});
  const Written messages = write(toy, dir.path / "m.json", {.detail = TraceDetail::Messages});
  CHECK(kernels.summary.bytes < steps.summary.bytes);
  CHECK(steps.summary.bytes < messages.summary.bytes);

  SUBCASE("GPU filter: only GPU 0 and the network, no flow has both ends left") {
    const Written one =
        write(toy, dir.path / "g.json", {.detail = TraceDetail::Messages, .gpus = std::vector<int>{0}});
    CHECK(one.trace.process_names ==
          std::map<std::int64_t, std::string>{{1, "GPU 0 · node 0"}, {5, "network"}});
    CHECK(one.trace.flows == 0);
    CHECK(one.summary.bytes < messages.summary.bytes);
    CHECK(one.trace.doc["otherData"]["gpu_filter"] == "0");
    // GPU 0's own slices are all there.
    CHECK(one.trace.on(1, 1).size() == messages.trace.on(1, 1).size());
  }
  SUBCASE("window: slices clipped to [1 ms, 3 ms), counters inside it") {
    analysis::StepTraceOptions o{.detail = TraceDetail::Messages};
    o.window = sim::parse_time_window("1 ms:3 ms");
    const Written win = write(toy, dir.path / "w.json", o);
    CHECK(win.summary.bytes < messages.summary.bytes);
    for (const auto& [thread, list] : win.trace.slices)
      for (const Slice& s : list) {
        CHECK(s.ts >= 1'000'000);
        CHECK(s.end() <= 3'000'000);
      }
    // Counter samples inside it, and every track carried to its end with its last value.
    for (const auto& [key, samples] : win.trace.counters) {
      for (const auto& s : samples) {
        CHECK(s.ts >= 1'000'000);
        CHECK(s.ts <= 3'000'000);
      }
      CHECK(samples.back().ts == 3'000'000);
      if (samples.size() > 1) CHECK(samples.back().value == samples[samples.size() - 2].value);
    }
    CHECK(win.trace.doc["otherData"]["window"] == "1 ms:3 ms");
  }
  SUBCASE("gzip: the same trace, smaller") {
    const Written gz = write(toy, dir.path / "m.json.gz", {.detail = TraceDetail::Messages, .gzip = true});
    CHECK(gz.summary.bytes < messages.summary.bytes / 4);
    CHECK(gz.trace.events == messages.trace.events);
  }
}

namespace {
// Throws from inside the run, at the first ring message (as an I/O error or a bug would).
struct Thrower final : sim::RingObserver {
  void on_ring_arrival(const sim::RingArrival&) override { throw std::runtime_error("interrupted"); }
};
}  // namespace

TEST_CASE("step trace: an interrupted run or bad options leave no trace and no temporary file") {
  Toy toy(4, 2, 2, Bytes::mib(4));
  TempDir dir;
  Thrower thrower;
  toy.setup.collective.observer = &thrower;  // kept at detail kernels: the tracer adds none
  CHECK_THROWS_WITH(analysis::simulate_step_with_trace(toy.setup, dir.path / "t.json", {}), "interrupted");
  CHECK(dir.entries().empty());
  // An existing file is left as it was.
  std::ofstream(dir.path / "t.json") << "old";
  CHECK_THROWS(analysis::simulate_step_with_trace(toy.setup, dir.path / "t.json", {}));
  CHECK(dir.entries() == std::vector<std::string>{"t.json"});
  CHECK(read_whole_file(dir.path / "t.json") == "old");

  toy.setup.collective.observer = nullptr;
  CHECK_THROWS_AS(
      analysis::simulate_step_with_trace(toy.setup, dir.path / "u.json", {.gpus = std::vector<int>{7}}),
      InputError);
  CHECK_THROWS_AS(analysis::simulate_step_with_trace(toy.setup, dir.path / "u.json",
                                                     {.utilization_bin = Time::zero()}),
                  InputError);
  CHECK(dir.entries() == std::vector<std::string>{"t.json"});
}

TEST_CASE("step trace: the phases of a hierarchical all-reduce nest in one slice") {
  // dp 16 on two DGX-1: each bucket is reduce-scattered inside a machine (ring of 8: 7 steps),
  // all-reduced between the machines (ring of 2: 1 reduce-scatter and 1 all-gather step), then
  // all-gathered inside the machine again (7 steps): 16 steps inside each bucket's slice.
  const workloads::Profile profile = chain(2);
  const topology::Topology topo = topology::build_cluster({.preset = "dgx1-v100", .nodes = 2});
  analysis::StepSetup setup;
  setup.profile = &profile;
  setup.topology = &topo;
  setup.placement = workloads::place_all_on_first(profile, 1);
  setup.mapping = workloads::default_mapping(topo, 16, 1);
  setup.step.bucket_size = Bytes::gib(1);
  setup.comm.algorithm = workloads::AllReduceAlgorithm::Hierarchical;
  TempDir dir;
  analysis::StepTraceSummary summary;
  analysis::simulate_step_with_trace(setup, dir.path / "h.json", {.detail = analysis::TraceDetail::Steps},
                                     &summary);
  const Trace t = check_trace(read_whole_file(dir.path / "h.json"));
  std::vector<std::string> expected;
  for (int i = 1; i <= 7; ++i) expected.push_back("reduce-scatter step " + std::to_string(i) + "/7");
  expected.push_back("reduce-scatter step 1/1");
  expected.push_back("all-gather step 1/1");
  for (int i = 1; i <= 7; ++i) expected.push_back("all-gather step " + std::to_string(i) + "/7");
  for (const int g : {0, 5, 8, 15}) {
    CAPTURE(g);
    const auto& comm = t.on(g + 1, 2);
    REQUIRE(!comm.empty());
    CHECK(comm[0].name == "all-reduce bucket 0 · 8.39 MB · 16 GPUs · hierarchical");
    std::vector<std::string> steps;
    for (std::size_t i = 1; i < comm.size(); ++i) {
      CHECK(comm[i].parent == comm[0].name);
      steps.push_back(comm[i].name);
    }
    CHECK(steps == expected);
  }
}

TEST_CASE("step trace: a traced step names the strategy it took and why the cheaper one was refused") {
  // dp 4 on a fully connected box: alike GPUs, so untraced the step may fold onto representatives;
  // a trace records every GPU, so the traced step refuses that and says so, with the same time.
  const Toy toy(4, 4, 1, Bytes::mib(8));
  TempDir dir;
  const analysis::StepResult untraced = analysis::simulate_step(toy.setup);
  const Written traced = write(toy, dir.path / "s.json");
  CHECK(traced.result.step_time == untraced.step_time);
  CHECK(traced.result.simulation.strategy == "every GPU simulated");
  REQUIRE_FALSE(traced.result.simulation.refused.empty());
  CHECK(traced.result.simulation.refused.front() ==
        "folded onto representative GPUs: a trace records every GPU");
  CHECK_FALSE(untraced.simulation.strategy.empty());
  if (untraced.simulation.strategy != traced.result.simulation.strategy)
    CHECK(untraced.simulation.strategy == "folded onto representative GPUs");
}
