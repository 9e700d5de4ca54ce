// A scenario's `outputs: {trace: ...}` block, end to end: parsed (detail steps included), mapped to
// trace options by the one function `hybridsim run` and `hybridsim sweep` share, and written by the
// CLI — one trace for a run, one per point for a sweep, named from the point's index, without
// changing the sweep's results.csv. The traces are parsed back with nlohmann-json.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "analysis/run/scenario_run.h"
#include "analysis/sweep/sweep_runner.h"
#include "analysis_step_trace_check.h"
#include "scenarios/loader/scenario.h"
#include "sim/error.h"

using namespace hybridsim;
namespace fs = std::filesystem;

using step_trace_test::check_trace;
using hybridsim::testing::read_whole_file;
using hybridsim::testing::ScratchDir;

namespace {

const std::string kSource = HYBRIDSIM_SOURCE_DIR;

// Runs the CLI with `args`, its output into `log`; true when it exits with 0.
bool run_cli(const std::string& args, const fs::path& log) {
  const std::string cmd = std::string(HYBRIDSIM_CLI) + " " + args + " > " + log.string() + " 2>&1";
  const int status = std::system(cmd.c_str());
  INFO("command: " << cmd << "\noutput:\n" << read_whole_file(log));
  CHECK(status == 0);
  return status == 0;
}

// Whether a trace at detail steps shows ring steps nested in a collective.
bool has_ring_steps(const step_trace_test::Trace& t) {
  for (const auto& [thread, slices] : t.slices)
    for (const auto& s : slices)
      if (s.name.starts_with("reduce-scatter step ") && s.depth == 1) return true;
  return false;
}

}  // namespace

TEST_CASE("outputs.trace.detail takes steps, and the shared mapping turns the block into trace options") {
  const std::string yaml =
      "cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\n"
      "outputs: {trace: {file: t/step.json.gz, detail: steps, gpus: \"0-2,5\", window: \"1 ms:2 ms\", "
      "gzip: true}}\n";
  const scenarios::Scenario s = scenarios::parse_scenario(yaml, "s.yaml");
  REQUIRE(s.outputs.trace);
  CHECK(s.outputs.trace->detail == scenarios::TraceDetail::Steps);
  // The canonical writer keeps it.
  const std::string canonical = scenarios::scenario_to_yaml(s);
  CHECK(canonical.find("detail: steps") != std::string::npos);
  CHECK(scenarios::parse_scenario(canonical, s.source, {}, s.base_dir) == s);

  const analysis::ScenarioRunOptions o = analysis::scenario_trace_options(s, "out/x");
  REQUIRE(o.trace);
  CHECK(*o.trace == fs::path("out/x/t/step.json.gz"));
  CHECK(o.trace_options.detail == analysis::TraceDetail::Steps);
  CHECK(o.trace_options.gpus == std::vector<int>{0, 1, 2, 5});
  REQUIRE(o.trace_options.window);
  CHECK(o.trace_options.window->start == sim::Time::ms(1));
  CHECK(o.trace_options.window->end == sim::Time::ms(2));
  CHECK(o.trace_options.gzip);

  for (const auto& [name, detail] : {std::pair{"kernels", analysis::TraceDetail::Kernels},
                                     std::pair{"messages", analysis::TraceDetail::Messages}}) {
    const auto t =
        scenarios::parse_scenario("cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\n", "s.yaml",
                                  std::vector<std::string>{std::string("outputs.trace.detail=") + name});
    CHECK(analysis::scenario_trace_options(t, "d").trace_options.detail == detail);
  }
  const auto none =
      scenarios::parse_scenario("cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\n", "s.yaml");
  CHECK_FALSE(analysis::scenario_trace_options(none, "d").trace);
  CHECK_THROWS_WITH_AS(scenarios::parse_scenario("cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\n"
                                                 "outputs: {trace: {detail: step}}\n",
                                                 "s.yaml"),
                       doctest::Contains("expected one of: kernels, steps, messages"), InputError);
}

TEST_CASE("a trace's name and gzip agree: .gz is added when gzip is asked for, and a .gz name is gzipped") {
  using analysis::trace_file;
  CHECK(trace_file("out/x.json", true).path == fs::path("out/x.json.gz"));
  CHECK(trace_file("out/x.json", true).gzip);
  CHECK(trace_file("x.json.gz", true).path == fs::path("x.json.gz"));
  CHECK(trace_file("x.json.gz", false).gzip);  // the name says gzip
  CHECK(trace_file("x.json", false).path == fs::path("x.json"));
  CHECK_FALSE(trace_file("x.json", false).gzip);
  CHECK(trace_file("dir.gz/x.json", true).path == fs::path("dir.gz/x.json.gz"));  // the file's name only
  // The scenario block goes through it too, so a sweep's point traces are trace-<i>.json.gz.
  const auto s = scenarios::parse_scenario("cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\n"
                                           "outputs: {trace: {gzip: true}}\n",
                                           "s.yaml");
  const analysis::ScenarioRunOptions o = analysis::scenario_trace_options(s, "out");
  CHECK(*o.trace == fs::path("out/trace.json.gz"));
  CHECK(o.trace_options.gzip);
  CHECK(analysis::sweep_point_trace_file(*o.trace, 2) == fs::path("out/trace-2.json.gz"));
}

TEST_CASE("hybridsim run --trace x.json --trace-gzip writes x.json.gz and says so") {
  const ScratchDir dir;
  REQUIRE(run_cli("run " + kSource + "/scenarios/examples/dgx1-gnmt-dp8.yaml --out " + dir.path.string() +
                      " --trace " + (dir.path / "x.json").string() + " --trace-gzip --trace-gpus 0",
                  dir.path / "log.txt"));
  CHECK_FALSE(fs::exists(dir.path / "x.json"));
  REQUIRE(fs::exists(dir.path / "x.json.gz"));
  CHECK(read_whole_file(dir.path / "log.txt").find((dir.path / "x.json.gz").string()) != std::string::npos);
  const auto t = check_trace(hybridsim::testing::read_gzip_file(dir.path / "x.json.gz"));
  CHECK(t.pid_named("GPU 0 · node 0") == 1);
}

TEST_CASE("a sweep point's trace file has the point's index before the extension") {
  CHECK(analysis::sweep_point_trace_file("out/trace.json", 3) == fs::path("out/trace-3.json"));
  CHECK(analysis::sweep_point_trace_file("t.json.gz", 12) == fs::path("t-12.json.gz"));
  CHECK(analysis::sweep_point_trace_file("a/b.c/trace", 0) == fs::path("a/b.c/trace-0"));
  CHECK(analysis::sweep_point_trace_file("my.step.json", 1) == fs::path("my.step-1.json"));
  CHECK(analysis::sweep_point_trace_file(".json", 2) == fs::path(".json-2"));
  // And back, from a file's name: what a sweep removes of an earlier sweep's traces.
  CHECK(analysis::sweep_point_trace_index("out/trace.json", "trace-3.json") == 3u);
  CHECK(analysis::sweep_point_trace_index("t.json.gz", "t-12.json.gz") == 12u);
  CHECK(analysis::sweep_point_trace_index("a/b.c/trace", "trace-0") == 0u);
  for (const char* other : {"t-12.json", "t-.json.gz", "t-x.json.gz", "t-012.json.gz", "t-1-2.json.gz",
                            "u-1.json.gz", "t-99999999999999999999.json.gz"})
    CHECK_FALSE(analysis::sweep_point_trace_index("t.json.gz", other).has_value());
}

TEST_CASE("hybridsim run writes the scenario's outputs.trace at detail steps") {
  const ScratchDir dir;
  REQUIRE(run_cli(
      "run " + kSource + "/scenarios/examples/dgx1-gnmt-dp8.yaml --out " + dir.path.string() +
          " --format json --set 'outputs.trace={file: traces/step.json, detail: steps, gpus: \"0-1\"}'",
      dir.path / "log.txt"));
  const fs::path file = dir.path / "traces" / "step.json";
  REQUIRE(fs::exists(file));
  const auto t = check_trace(read_whole_file(file));
  CHECK(t.doc["otherData"]["detail"] == "steps");
  CHECK(t.doc["otherData"]["gpu_filter"] == "0-1");
  CHECK(t.pid_named("GPU 0 · node 0") > 0);
  CHECK(t.pid_named("GPU 2 · node 0") < 0);  // filtered out
  CHECK(has_ring_steps(t));
  // Written atomically: nothing but the trace in its folder.
  CHECK(fs::directory_iterator(dir.path / "traces")->path().filename() == "step.json");
  CHECK(std::distance(fs::directory_iterator(dir.path / "traces"), fs::directory_iterator()) == 1);
}

TEST_CASE("hybridsim sweep writes one trace per point, named by index, and the same results.csv") {
  const ScratchDir dir;
  // Two points of the shipped sweep (zipped), an 8-GPU data-parallel one and a dp 4 × mp 2 one.
  const std::string sweep =
      "sweep " + kSource +
      "/scenarios/examples/dgx1-nvlink-sweep.yaml --jobs 2 --quiet --set sweep.mode=zip"
      " --set 'sweep.parameters=[{path: cluster.links.nvlink.bandwidth, values: [25 GB/s, 50 GB/s]},"
      " {path: parallelism, values: [{dp: 8, mp: 1}, {dp: 4, mp: 2}]}]'";
  REQUIRE(run_cli(sweep + " --out " + (dir.path / "plain").string(), dir.path / "plain.log"));
  REQUIRE(run_cli(sweep + " --out " + (dir.path / "traced").string() +
                      " --set 'outputs.trace={detail: steps, gpus: \"0-3\"}'",
                  dir.path / "traced.log"));
  const std::string plain_csv = read_whole_file(dir.path / "plain" / "results.csv");
  CHECK_FALSE(plain_csv.empty());
  CHECK(read_whole_file(dir.path / "traced" / "results.csv") == plain_csv);

  std::vector<std::string> traces;
  for (const auto& e : fs::directory_iterator(dir.path / "traced"))
    if (e.path().filename().string().starts_with("trace")) traces.push_back(e.path().filename().string());
  std::sort(traces.begin(), traces.end());
  CHECK(traces == std::vector<std::string>{"trace-0.json", "trace-1.json"});
  for (int i = 0; i < 2; ++i) {
    const auto t =
        check_trace(read_whole_file(dir.path / "traced" / ("trace-" + std::to_string(i) + ".json")));
    const auto& other = t.doc["otherData"];
    CHECK(other["detail"] == "steps");
    CHECK(other["sweep_point"] == std::to_string(i));
    CHECK(other["strategy"] == (i == 0 ? "dp 8 × mp 1 = 8 GPUs" : "dp 4 × mp 2 = 8 GPUs"));
    CHECK(other["sweep_label"].get<std::string>().starts_with(i == 0 ? "nvlink.bandwidth=25 GB/s"
                                                                    : "nvlink.bandwidth=50 GB/s"));
    CHECK(has_ring_steps(t));
  }
  CHECK_FALSE(fs::exists(dir.path / "plain" / "trace-0.json"));
}

TEST_CASE("a sweep into a folder of an earlier, larger sweep removes the point traces it no longer writes") {
  // Three points traced, then one into the same folder: trace-1.json and trace-2.json of the first
  // stayed beside a one-row results.csv, read as this sweep's. Files of other names stay, and so do
  // the points of another shard sharing the folder (--shard, MPI ranks): they are theirs to write.
  const ScratchDir dir;
  const auto sweep_of = [&](const std::string& algorithms, const std::string& name) {
    const fs::path scenario = dir.path / name;
    std::ofstream(scenario)
        << "cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\nparallelism: {dp: 8}\n"
           "outputs: {trace: {file: t.json, detail: kernels, gpus: \"0\"}}\n"
           "sweep:\n  parameters:\n    - {path: communication.algorithm, values: "
        << algorithms << "}\n";
    return scenario.string();
  };
  const auto listing = [&](const fs::path& folder) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(folder))
      if (e.path().filename().string().starts_with("t")) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  };
  analysis::SweepOptions o;
  o.out = dir.path / "out";
  o.jobs = 1;
  o.progress = false;
  analysis::run_sweep(sweep_of("[ring, tree, hierarchical]", "three.yaml"), o);
  CHECK(listing(dir.path / "out") == std::vector<std::string>{"t-0.json", "t-1.json", "t-2.json"});
  // Earlier gzipped traces (of a point past this sweep's, and of point 0, which now writes t-0.json),
  // and files a user put there.
  std::ofstream(dir.path / "out" / "t-9.json.gz") << "an earlier sweep's trace";
  std::ofstream(dir.path / "out" / "t-0.json.gz") << "point 0's, gzipped by an earlier sweep";
  std::ofstream(dir.path / "out" / "t-notes.json") << "not a point's trace";
  std::ofstream(dir.path / "out" / "t-1.txt") << "not a point's trace";
  analysis::run_sweep(sweep_of("[ring]", "one.yaml"), o);
  CHECK(listing(dir.path / "out") == std::vector<std::string>{"t-0.json", "t-1.txt", "t-notes.json"});
  // Shard 1 of 2 of the three points writes points 0 and 2; point 1 is the other shard's.
  analysis::SweepOptions shard = o;
  shard.out = dir.path / "shared";
  analysis::run_sweep(sweep_of("[ring, tree, hierarchical]", "three.yaml"), shard);
  std::ofstream(dir.path / "shared" / "t-3.json") << "an earlier sweep's trace";
  shard.shard = {1, 2};
  analysis::run_sweep(sweep_of("[ring, tree, hierarchical]", "three.yaml"), shard);
  CHECK(listing(dir.path / "shared") == std::vector<std::string>{"t-0.json", "t-1.json", "t-2.json"});
}

TEST_CASE("one point, one GPU and one hop are said in the singular") {
  // A one-point sweep printed "sweep: 1 points run"; a trace of --trace-gpus 0 "trace shows GPUs 0";
  // a critical path over two GPUs "1 hops between them".
  const ScratchDir dir;
  REQUIRE(run_cli("sweep -q " + kSource + "/scenarios/examples/dgx1-nvlink-sweep.yaml --set sweep.mode=zip " +
                      "--set 'sweep.parameters=[{path: parallelism, values: [{dp: 8}]}]' --out " +
                      (dir.path / "s").string(),
                  dir.path / "sweep.log"));
  CHECK(read_whole_file(dir.path / "sweep.log").starts_with("sweep: 1 point run\n"));
  // GNMT dp 16 on 2 DGX-1, hierarchical in 6.25 MB buckets: the path crosses to another GPU once.
  REQUIRE(run_cli("run -q " + kSource + "/scenarios/dgx1/gnmt-dp8.yaml --set cluster.nodes=2 " +
                      "--set parallelism.dp=16 --set communication.algorithm=hierarchical --set " +
                      "'communication.bucket_size=6.25 MB' --trace " + (dir.path / "t.json").string() +
                      " --trace-gpus 3",
                  dir.path / "run.log"));
  const std::string run = read_whole_file(dir.path / "run.log");
  CHECK(run.find("trace shows                     GPU 3, with every GPU simulated in full") !=
        std::string::npos);
  CHECK(run.find("; on 2 GPUs, 1 hop between them\n") != std::string::npos);
}
