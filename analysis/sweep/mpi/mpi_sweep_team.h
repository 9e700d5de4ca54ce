// An MPI job as a SweepTeam (analysis/sweep/sweep_team.h): `mpirun -n R hybridsim sweep ...` shares
// the points among R ranks; rank 0 hands them out and writes the results. Built only with
// -DHYBRIDSIM_MPI=ON. One object per process: it initializes MPI and finalizes it when destroyed.
#pragma once
#include "analysis/sweep/sweep_team.h"

namespace hybridsim::analysis {

class MpiSweepTeam final : public SweepTeam {
 public:
  MpiSweepTeam();  // MPI_Init_thread; throws InternalError without MPI_THREAD_SERIALIZED support
  ~MpiSweepTeam() override;
  MpiSweepTeam(const MpiSweepTeam&) = delete;
  MpiSweepTeam& operator=(const MpiSweepTeam&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::vector<std::size_t> share_finished(std::vector<std::size_t> finished) override;
  void serve(const std::function<std::optional<std::size_t>(int rank)>& take,
             const std::function<void(int rank, const Finished&)>& record) override;
  std::optional<std::size_t> next(const std::optional<Finished>& previous) override;
  void done() override;
  // Ends every rank at once (a rank that failed alone would leave the others waiting).
  [[noreturn]] void abort(int exit_code);

 private:
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace hybridsim::analysis
