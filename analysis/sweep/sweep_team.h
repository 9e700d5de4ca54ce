// Lets several processes share one sweep; analysis/sweep/mpi/mpi_sweep_team.h does it over MPI.
// Every process expands the same points and agrees on the same list of points still to run (the
// "positions"); the leader (rank 0) hands out positions one at a time to whichever process asks
// (points differ hundreds of times in cost, so a static split would leave ranks idle) and alone writes
// the results. run_sweep() calls a team from one thread of a process at a time.
#pragma once
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace hybridsim::analysis {

class SweepTeam {
 public:
  struct Finished {
    std::size_t position = 0;
    bool failed = false;
    std::string text;  // the point's CSV row, or its error message
  };

  virtual ~SweepTeam() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // The leader's list of already finished point indices (a resumed sweep) reaches every process.
  virtual std::vector<std::size_t> share_finished(std::vector<std::size_t> finished) = 0;
  // Leader: answers every other process's requests until each has said it is done. A request
  // may carry the result of the asker's previous point, passed to `record` with the asker's rank;
  // the answer is `take(rank)` for the asker: a position, or nullopt when there is nothing left.
  virtual void serve(const std::function<std::optional<std::size_t>(int rank)>& take,
                     const std::function<void(int rank, const Finished&)>& record) = 0;
  // Others: hands in the previous result, if any, and gets the next position (nullopt: stop).
  virtual std::optional<std::size_t> next(const std::optional<Finished>& previous) = 0;
  // Others: says this process has stopped asking (after its last next() returned nullopt).
  virtual void done() = 0;
};

}  // namespace hybridsim::analysis
