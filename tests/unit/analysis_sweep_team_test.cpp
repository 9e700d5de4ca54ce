// Sweeps shared by a team of processes (analysis/sweep/sweep_team.h), with the processes played by
// threads joined through an in-memory exchange: the same protocol as the MPI team, testable (and
// sanitizer-checked) without MPI. tests/mpi/mpi_sweep_test.sh runs the real thing under mpirun.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include "analysis/sweep/sweep_runner.h"
#include "analysis/sweep/sweep_integrity.h"
#include "analysis/sweep/sweep_team.h"
#include "scenarios/loader/sweep.h"
#include "sim/error.h"
#include "tests/unit/test_files.h"

using namespace hybridsim;
namespace fs = std::filesystem;
using analysis::SweepTeam;

using hybridsim::testing::read_whole_file;
using hybridsim::testing::fresh_temp_dir;

namespace {

const std::string kScenario =
    std::string(HYBRIDSIM_SOURCE_DIR) + "/scenarios/examples/dgx1-nvlink-sweep.yaml";

// What the ranks share: the leader's finished list, requests to the leader, answers per rank.
struct Exchange {
  struct Request {
    int rank;
    bool done;
    std::optional<SweepTeam::Finished> result;
  };
  std::mutex mutex;
  std::condition_variable changed;
  std::optional<std::vector<std::size_t>> finished;
  std::deque<Request> requests;
  std::map<int, std::deque<std::optional<std::size_t>>> answers;
};

class LoopbackTeam final : public SweepTeam {
 public:
  LoopbackTeam(Exchange& x, int rank, int size) : x_(x), rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::vector<std::size_t> share_finished(std::vector<std::size_t> finished) override {
    std::unique_lock lock(x_.mutex);
    if (rank_ == 0) {
      x_.finished = finished;
      x_.changed.notify_all();
      return finished;
    }
    x_.changed.wait(lock, [&] { return x_.finished.has_value(); });
    return *x_.finished;
  }
  void serve(const std::function<std::optional<std::size_t>(int)>& take,
             const std::function<void(int, const Finished&)>& record) override {
    for (int active = size_ - 1; active > 0;) {
      std::unique_lock lock(x_.mutex);
      x_.changed.wait(lock, [&] { return !x_.requests.empty(); });
      const Exchange::Request r = x_.requests.front();
      x_.requests.pop_front();
      lock.unlock();
      if (r.done) {
        --active;
        continue;
      }
      if (r.result) record(r.rank, *r.result);
      const auto answer = take(r.rank);
      lock.lock();
      x_.answers[r.rank].push_back(answer);
      x_.changed.notify_all();
    }
  }
  std::optional<std::size_t> next(const std::optional<Finished>& previous) override {
    std::unique_lock lock(x_.mutex);
    x_.requests.push_back({rank_, false, previous});
    x_.changed.notify_all();
    auto& mine = x_.answers[rank_];
    x_.changed.wait(lock, [&] { return !mine.empty(); });
    const auto answer = mine.front();
    mine.pop_front();
    return answer;
  }
  void done() override {
    std::lock_guard lock(x_.mutex);
    x_.requests.push_back({rank_, true, std::nullopt});
    x_.changed.notify_all();
  }

 private:
  Exchange& x_;
  int rank_, size_;
};

struct TeamRun {
  analysis::SweepOutcome leader;
  std::vector<analysis::SweepOutcome> followers;
  std::string leader_error;
};

// The rows the leader has written to the partial file so far (lines that start with a point's index).
std::size_t partial_rows(const fs::path& out) {
  std::ifstream in(out / "points.partial.csv");
  std::size_t rows = 0;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] >= '0' && line[0] <= '9') ++rows;
  return rows;
}

// Runs one sweep as `ranks` cooperating "processes" (threads), each with `jobs` workers. With
// `late_until_rows`, the followers start only once the leader has written that many rows (or after
// a minute): ranks that start late.
TeamRun run_as_team(const std::string& scenario, const fs::path& out, int ranks, int jobs,
                    bool resume = false, std::size_t late_until_rows = 0) {
  Exchange x;
  std::vector<std::unique_ptr<LoopbackTeam>> teams;
  for (int r = 0; r < ranks; ++r) teams.push_back(std::make_unique<LoopbackTeam>(x, r, ranks));
  TeamRun run;
  run.followers.resize(static_cast<std::size_t>(ranks - 1));
  std::vector<std::thread> processes;
  for (int r = 0; r < ranks; ++r) {
    processes.emplace_back([&, r] {
      analysis::SweepOptions o;
      o.out = out;
      o.jobs = jobs;
      o.progress = false;
      o.resume = resume;
      o.team = teams[static_cast<std::size_t>(r)].get();
      if (r > 0 && late_until_rows > 0)
        for (int waited = 0; waited < 6000 && partial_rows(out) < late_until_rows; ++waited)
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
      try {
        if (r == 0) run.leader = analysis::run_sweep(scenario, o);
        else run.followers[static_cast<std::size_t>(r - 1)] = analysis::run_sweep(scenario, o);
      } catch (const InputError& e) {
        if (r == 0) run.leader_error = e.what();
      }
    });
  }
  for (auto& p : processes) p.join();
  return run;
}

analysis::SweepOutcome run_alone(const std::string& scenario, const fs::path& out) {
  analysis::SweepOptions o;
  o.out = out;
  o.jobs = 1;
  o.progress = false;
  return analysis::run_sweep(scenario, o);
}

}  // namespace

TEST_CASE("sweep team: three ranks share the points and the leader writes what one process writes") {
  const auto alone = run_alone(kScenario, fresh_temp_dir("team-test-alone"));
  const auto team = run_as_team(kScenario, fresh_temp_dir("team-test-team"), 3, 1);
  REQUIRE(team.leader_error.empty());
  CHECK(read_whole_file(team.leader.directory / "results.csv") == alone.csv);
  CHECK(read_whole_file(team.leader.directory / "summary.json") ==
        read_whole_file(alone.directory / "summary.json"));
  CHECK(team.leader.points_run == 6);
  REQUIRE(team.leader.points_by_rank.size() == 3);
  std::size_t sum = 0, followers_ran = 0;
  for (const auto n : team.leader.points_by_rank) sum += n;
  for (const auto& f : team.followers) followers_ran += f.points_run;
  CHECK(sum == 6);
  CHECK(followers_ran == team.leader.points_by_rank[1] + team.leader.points_by_rank[2]);
  CHECK_FALSE(fs::exists(team.leader.directory / "points.partial.csv"));
}

TEST_CASE("sweep team: a rank that starts late still runs a point, the first kept for it") {
  // The leader's own worker runs five of the six points before the follower starts; handed out first
  // come first served, it ran the sixth too and the follower none (the MPI test failed so once under
  // load). Position 0 is kept for rank 1's first ask.
  const auto alone = run_alone(kScenario, fresh_temp_dir("team-test-alone-late"));
  const fs::path dir = fresh_temp_dir("team-test-team-late");
  const auto team = run_as_team(kScenario, dir, 2, 1, /*resume=*/false, /*late_until_rows=*/5);
  REQUIRE(team.leader_error.empty());
  REQUIRE(team.leader.points_by_rank.size() == 2);
  CHECK(team.leader.points_by_rank[0] == 5);
  CHECK(team.leader.points_by_rank[1] == 1);
  CHECK(team.followers[0].points_run == 1);
  CHECK(read_whole_file(dir / "results.csv") == alone.csv);
}

TEST_CASE("sweep team: a resumed sweep skips the leader's finished points on every rank") {
  const auto alone = run_alone(kScenario, fresh_temp_dir("team-test-alone-resume"));
  // Keep the header and the first two rows as if the sweep had been interrupted there.
  const fs::path dir = fresh_temp_dir("team-test-team-resume");
  fs::create_directories(dir);
  std::istringstream lines(alone.csv);
  const auto points = scenarios::expand_sweep(scenarios::load_scenario(kScenario));
  std::string line;
  std::string partial =
      analysis::partial_preamble(analysis::sweep_fingerprint(read_whole_file(kScenario), {}, points),
                                 points.size()) +
      "\n";
  for (int i = 0; i < 3 && std::getline(lines, line); ++i) partial += line + "\n";
  std::ofstream(dir / "points.partial.csv") << partial;
  const auto team = run_as_team(kScenario, dir, 2, 2, /*resume=*/true);
  REQUIRE(team.leader_error.empty());
  CHECK(team.leader.points_run == 4);
  CHECK(team.leader.points_by_rank[0] + team.leader.points_by_rank[1] == 4);
  CHECK(read_whole_file(dir / "results.csv") == alone.csv);
}

TEST_CASE(
    "sweep team: a point that fails once run, on any rank, is a row at the leader, and the others run") {
  const fs::path dir = fresh_temp_dir("team-test-team-fail");
  fs::create_directories(dir);
  const fs::path scenario = dir / "bad.yaml";
  // Point 1's trace window starts after its step (306 ms): refused once the step has run, not before
  // (a point the loader refuses is a row too, analysis_sweep_test.cpp). It stopped the sweep: no
  // results.csv, the leader's error naming point 1, the three good points' figures only in the
  // partial file.
  std::ofstream(scenario) << "cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\nparallelism: {dp: 8}\n"
                             "outputs: {directory: "
                          << (dir / "out").string()
                          << ", trace: {file: t.json}}\n"
                             "sweep:\n  parameters:\n    - {path: outputs.trace.window, values: "
                             "[\"0 ms:1 ms\", \"10 s:11 s\", \"1 ms:2 ms\", \"2 ms:3 ms\"]}\n";
  const auto team = run_as_team(scenario.string(), dir / "out", 3, 1);
  REQUIRE(team.leader_error.empty());
  CHECK(team.leader.points_run == 3);
  CHECK(team.leader.points_failed == 1);
  CHECK(team.leader.points_by_rank[0] + team.leader.points_by_rank[1] + team.leader.points_by_rank[2] == 3);
  const std::string csv = read_whole_file(dir / "out" / "results.csv");
  CHECK(csv == team.leader.csv);
  CHECK(csv.find("\n1,trace.window=10 s:11 s,10 s:11 s,,,") != std::string::npos);
  CHECK(csv.find(",\"failed once run: sweep value outputs.trace.window=10 s:11 s: outputs.trace.window "
                 "\"\"10 s:11 s\"\" starts after the step") != std::string::npos);
  REQUIRE(team.leader.notes.size() == 1);
  CHECK(team.leader.notes[0].starts_with("sweep point 1 (trace.window=10 s:11 s): failed once run"));
  // One process writes the same table: the row does not depend on which rank ran the point.
  CHECK(run_alone(scenario.string(), dir / "alone").csv == csv);
}
