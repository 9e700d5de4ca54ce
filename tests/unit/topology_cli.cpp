// `hybridsim topology`: the summary, --route, --rings, --dot, YAML files and errors.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tests/paths/paths.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

// Runs the CLI with `args`; returns its exit status and stdout + stderr.
std::pair<int, std::string> run_cli(const std::string& args) {
  const std::string cmd = std::string(HYBRIDSIM_CLI) + " topology " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, pipe)) out += buf;
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("hybridsim topology: DGX-1 summary, route, rings and Graphviz") {
  const auto dot = std::filesystem::temp_directory_path() /
                   ("hybridsim_cli_topology_test-" + std::to_string(getpid()) + ".dot");
  const auto [status, out] = run_cli("dgx1-v100 --route 0 5 --rings --dot " + dot.string());
  CHECK(status == 0);
  CHECK(has(out, "topology dgx1-v100: 8 GPUs on 1 machine, 18 devices, 66 directed links"));
  // 16 NVLink pairs: 8 single (25 GB/s) and 8 doubled (50 GB/s), each in 2 directions.
  CHECK(has(out, "32 directed, 24 physical:  25 GB/s ×16  50 GB/s ×16"));
  CHECK(has(out, "route GPU0 → GPU5 (GPU 0 → 5): 5 hops, bottleneck 12 GB/s"));
  CHECK(has(out, "QPI CPU0→CPU1"));
  CHECK(has(out, "rings over all 8 GPUs: 6 channels"));
  std::ifstream in(dot);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str().starts_with("digraph G {"));
  CHECK(has(text.str(), "label=\"GPU3\", shape=box"));
  CHECK(has(text.str(), "NVLink 50 GB/s (2 links)"));
  CHECK_FALSE(std::filesystem::exists(dot.string() + ".tmp"));
  std::filesystem::remove(dot);
}

TEST_CASE("hybridsim topology: clusters, YAML files and errors") {
  const auto [status, out] = run_cli("dgx1-v100 --nodes 2 --route 0 8");
  CHECK(status == 0);
  CHECK(has(out, "16 GPUs on 2 machines"));
  CHECK(has(out, "IB n0.NIC0→leaf0"));
  const auto file = std::filesystem::temp_directory_path() /
                    ("hybridsim_cli_topology_test-" + std::to_string(getpid()) + ".yaml");
  {
    std::ofstream f(file);
    f << "nodes:\n  - {name: g0, kind: gpu}\n  - {name: g1, kind: gpu}\nlinks:\n"
         "  - {a: g0, b: g1, kind: nvlink, bandwidth: 25 GB/s, count: 4}\n";
  }
  const auto [yaml_status, yaml_out] = run_cli(file.string() + " --route 1 0");
  CHECK(yaml_status == 0);
  CHECK(has(yaml_out, "route g1 → g0 (GPU 1 → 0): 1 hop, bottleneck 100 GB/s"));
  std::filesystem::remove(file);
  const auto [bad_status, bad_out] = run_cli("dgx9");
  CHECK(bad_status == 1);
  CHECK(has(bad_out, "unknown topology preset \"dgx9\": expected one of dgx1-v100"));
  const auto [rank_status, rank_out] = run_cli("dgx1-v100 --route 0 8");
  CHECK(rank_status == 1);
  CHECK(
      has(rank_out,
          "--route 0 8: GPU 8 does not exist: the topology has 8 GPUs; expected two GPU ranks from 0 to 7"));
}
