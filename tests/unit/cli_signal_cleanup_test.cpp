// A command stopped by a signal mid-write leaves nothing half-written: the trace a run streams goes to
// a temporary file next to its target, and SIGTERM (as SIGINT, SIGHUP) removes it, and the folders
// made for it, before the process dies of the signal (analysis/output/temp_files.h).
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "tests/unit/test_files.h"

namespace fs = std::filesystem;
using hybridsim::testing::ScratchDir;

namespace {

bool holds_temp_file(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".tmp-") != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("cli: SIGTERM mid-write removes the trace's temporary file and folders, and dies of the signal") {
  ScratchDir scratch;
  const std::string dir = scratch.path.string();
  // The full-path LLaMA-2 7B step takes seconds (its collectives message by message), streaming its
  // trace all the while; the shell records the tool's exit status once it is killed.
  const std::string command =
      "cd '" + dir + "' && ('" + std::string(HYBRIDSIM_CLI) + "' run '" + std::string(HYBRIDSIM_SOURCE_DIR) +
      "/scenarios/llm/llama2-7b-zero3-dgx-a100.yaml' --out o --trace traces/step/t.json -q "
      "--set communication.fast_path=off > /dev/null 2>&1 & echo $! > pid; wait $!; "
      "echo $? > status) > /dev/null 2>&1 &";
  REQUIRE(std::system(command.c_str()) == 0);
  // Wait for the temporary trace file to appear (the step is being written), then stop the tool.
  const fs::path traces = scratch.path / "traces" / "step";
  bool writing = false;
  for (int i = 0; i < 600 && !writing; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    writing = fs::exists(scratch.path / "pid") && fs::is_directory(traces) && holds_temp_file(traces);
  }
  REQUIRE(writing);
  const std::string kill = "kill -TERM $(cat '" + dir + "/pid')";
  REQUIRE(std::system(kill.c_str()) == 0);
  for (int i = 0; i < 600 && !fs::exists(scratch.path / "status"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // its text written whole
  std::string status;
  std::ifstream(scratch.path / "status") >> status;
  CHECK(status == "143");  // 128 + SIGTERM: died of the signal, as without the handler
  // The folders made for the trace go with its file (they stayed, empty: traces/step/).
  CHECK_FALSE(fs::exists(scratch.path / "traces"));
  CHECK_FALSE(holds_temp_file(scratch.path));
  CHECK_FALSE(fs::exists(scratch.path / "o"));
}
