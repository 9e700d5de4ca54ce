// The traces the browser test (tests/browser/speedscope_test.mjs) opens in speedscope, written here
// from shipped scenarios through run_scenario (what `hybridsim run` does), each checked by
// check_trace. With HYBRIDSIM_BROWSER_TRACES=DIR (CTest sets it for the browser test's fixture,
// tests/CMakeLists.txt) they stay in DIR with manifest.json: each trace's file and the tracks and
// slices speedscope must show. The shipped example trace is listed as it is committed.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analysis/run/scenario_run.h"
#include "analysis_step_trace_check.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/scenario.h"

using namespace hybridsim;
using step_trace_test::check_trace;
using step_trace_test::read_gzip_file;
using step_trace_test::read_whole_file;
namespace fs = std::filesystem;

namespace {

const std::string kExamples = std::string(HYBRIDSIM_SOURCE_DIR) + "/scenarios/examples/";

struct BrowserTrace {
  std::string title;
  std::string scenario;           // in scenarios/examples/
  std::vector<std::string> sets;  // --set overrides
  std::string file;
  std::string detail;
  std::optional<std::string> gpus = std::nullopt;
  std::optional<std::string> window = std::nullopt;
  std::size_t tracks = 0;  // threads with slices: derived by hand below, each a speedscope profile
};

nlohmann::json entry(const std::string& title, const fs::path& file, const step_trace_test::Trace& t) {
  return {{"title", title}, {"file", fs::absolute(file).string()}, {"tracks", t.slices.size()},
          {"slices", t.slice_count()}};
}

}  // namespace

TEST_CASE("browser traces: every trace the browser test opens is written and passes the checker") {
  const char* kept = std::getenv("HYBRIDSIM_BROWSER_TRACES");
  std::optional<step_trace_test::TempDir> scratch;
  fs::path dir;
  if (kept != nullptr) {
    dir = kept;
    fs::create_directories(dir);
  } else {
    scratch.emplace();
    dir = scratch->path;
  }
  const std::string hybrid = "parallelism={dp: 4, mp: 2}";
  // GNMT dp 4 × mp 2 on one DGX-1: 8 GPUs with 4 streams each (compute, communication, send→ and
  // recv← of its MP partner): 32 tracks at every detail, plus one per link that carried a message.
  // Inception-V3 dp 32 on 4 DGX-1 (hierarchical all-reduce), GPUs 0-7: compute and communication
  // each, 16 tracks. Inception-V3 dp 8 × mp 2 on 2 DGX-1, GPUs 0-3 and 8: 5 GPUs × 4 streams.
  const std::vector<BrowserTrace> traces = {
      {"GNMT dp 4 × mp 2, kernels",
       "dgx1-gnmt-dp8.yaml",
       {hybrid},
       "gnmt-kernels.json",
       "kernels",
       {},
       {},
       32},
      {"GNMT dp 4 × mp 2, ring steps",
       "dgx1-gnmt-dp8.yaml",
       {hybrid},
       "gnmt-steps.json",
       "steps",
       {},
       {},
       32},
      {"GNMT dp 4 × mp 2, messages",
       "dgx1-gnmt-dp8.yaml",
       {hybrid},
       "gnmt-messages.json",
       "messages",
       {},
       {},
       0},
      {"Inception-V3 dp 32, hierarchical, GPUs 0-7, gzip",
       "cluster4-inception-dp32.yaml",
       {},
       "inception-hierarchical.json.gz",
       "steps",
       "0-7",
       {},
       16},
      {"Inception-V3 dp 8 × mp 2 on 2 DGX-1, messages, GPUs 0-3,8, 50-120 ms",
       "cluster4-inception-dp32.yaml",
       {"cluster.nodes=2", "parallelism={dp: 8, mp: 2}"},
       "inception-window-gpus.json",
       "messages",
       "0-3,8",
       "50 ms:120 ms",
       0},
      // The default trace of a bigger run: one GPU per class of alike GPUs (here 8 of 32, and the
      // critical GPU), each named with how many it stands for.
      {"Inception-V3 dp 32 on 4 DGX-1, default: one GPU per class",
       "cluster4-inception-dp32.yaml",
       {},
       "inception-classes.json",
       "kernels",
       {},
       {},
       0},
      // Issue 30 item 6: README's 1,024-GPU example (GNMT dp 512 × mp 2 on 128 DGX-1), 833 MB of
      // JSON when every GPU was traced, which speedscope took 200 s and 4.8 GB to open; by default
      // one GPU per class (8 of 1,024), about 5.4 MB, opened here as a user opens it.
      {"GNMT dp 512 × mp 2 on 128 DGX-1 (1,024 GPUs), default: one GPU per class",
       "dgx1-gnmt-dp8.yaml",
       {"cluster.nodes=128", "parallelism={dp: 512, mp: 2}"},
       "gnmt-1024-classes.json",
       "kernels",
       {},
       {},
       0},
      // A 1F1B pipeline (GPT-3 175B, 8 layers, tp 8 × pp 4, 8 micro-batches, full recomputation):
      // micro-batch, recompute and bubble slices on each stage's compute thread. One GPU per stage
      // (0, 8, 16, 24): compute, a send and a receive stream per neighbouring stage, and the TP stream
      // (each column-parallel linear's input-gradient all-reduce beside its wgrad), 20 tracks.
      {"GPT-3 175B tp 8 × pp 4, 1F1B, GPUs 0,8,16,24",
       "../llm/gpt3-175b-pp8-dgx-a100.yaml",
       {"parallelism.pp=4", "cluster.nodes=4", "workload.model.layers_simulated=8",
        "training.global_batch=8"},
       "pipeline-1f1b.json",
       "kernels",
       "0,8,16,24",
       {},
       20},
  };
  nlohmann::json manifest = {{"traces", nlohmann::json::array()}};
  for (const BrowserTrace& b : traces) {
    CAPTURE(b.title);
    std::vector<std::string> sets = b.sets;
    sets.push_back("outputs.trace={file: " + b.file + ", detail: " + b.detail + "}");
    if (b.gpus) sets.push_back("outputs.trace.gpus=\"" + *b.gpus + "\"");
    if (b.window) sets.push_back("outputs.trace.window=\"" + *b.window + "\"");
    const scenarios::Scenario s = scenarios::load_scenario(kExamples + b.scenario, sets);
    const analysis::ScenarioRunOptions options = analysis::scenario_trace_options(s, dir);
    const analysis::ScenarioRun run = analysis::run_scenario(scenarios::resolve(s), options);
    REQUIRE(run.trace_path);
    CHECK(*run.trace_path == dir / b.file);
    const bool gzip = b.file.ends_with(".gz");
    const auto t = check_trace(gzip ? read_gzip_file(dir / b.file) : read_whole_file(dir / b.file));
    if (b.tracks > 0) CHECK(t.slices.size() == b.tracks);
    if (b.file == "inception-classes.json") {
      CHECK(t.process_names.at(1) == "GPU 0 · node 0 · for 4 GPUs");
      CHECK(t.process_names.size() <= 9);  // 8 classes and perhaps the critical GPU; no network
      CHECK(t.pid_named("network") == -1);
    }
    if (b.file == "gnmt-1024-classes.json") {  // 8 GPUs for 128 each, under 100 MB (issue 30)
      CHECK(t.process_names.at(1) == "GPU 0 · node 0 · for 128 GPUs");
      CHECK(t.process_names.size() == 8);
      CHECK(fs::file_size(dir / b.file) < 100'000'000);
    }
    if (b.detail == "messages") {  // the GPU streams and at least one link
      std::size_t gpu_tracks = 0;
      for (const auto& [thread, list] : t.slices) gpu_tracks += t.process_names.at(thread.first) != "network";
      CHECK(gpu_tracks == (b.gpus ? 20u : 32u));
      CHECK(t.slices.size() > gpu_tracks);
    }
    manifest["traces"].push_back(entry(b.title, dir / b.file, t));
  }
  // The shipped example (its bytes are what the code writes: analysis_step_trace_example.cpp):
  // GPUs 0, 3, 8 and 11 with 4 streams each. Its screenshot shows GPU 0's compute thread (the first
  // track), zoomed in three wheel steps near 65 ms: GPU 0 idle, then kernels of Mixed_7a side by side.
  const fs::path example = kExamples + "trace-2node-hybrid.json";
  const auto t = check_trace(read_whole_file(example));
  CHECK(t.slices.size() == 16);
  nlohmann::json e = entry("Inception-V3 dp 8 × mp 2 on 2 DGX-1 (the shipped example)", example, t);
  e["screenshot"] = {{"file", "trace-2node-hybrid.png"}, {"track", 0}, {"x", 300}, {"zoom", 3}};
  manifest["traces"].push_back(e);
  std::ofstream(dir / "manifest.json") << manifest.dump(2) << "\n";
  CHECK(fs::file_size(dir / "manifest.json") > 0);
}
