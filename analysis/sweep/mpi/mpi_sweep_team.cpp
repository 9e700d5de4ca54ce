#include "analysis/sweep/mpi/mpi_sweep_team.h"

#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "sim/error.h"

namespace hybridsim::analysis {

namespace {

// Messages: a follower asks (kAsk, carrying its previous result or nothing), the leader answers
// (kAnswer: a position, or kStop), and a follower whose workers have all stopped says kDone.
// A follower holds one request open at a time, so answers cannot cross.
constexpr int kAsk = 1;
constexpr int kAnswer = 2;
constexpr int kDone = 3;
constexpr std::uint64_t kStop = UINT64_MAX;

std::vector<char> encode(const SweepTeam::Finished& f) {
  std::vector<char> out(sizeof(std::uint64_t) + 1 + f.text.size());
  const std::uint64_t position = f.position;
  std::memcpy(out.data(), &position, sizeof position);
  out[sizeof position] = f.failed ? 1 : 0;
  std::memcpy(out.data() + sizeof position + 1, f.text.data(), f.text.size());
  return out;
}

SweepTeam::Finished decode(const std::vector<char>& in, int from) {
  std::uint64_t position = 0;
  if (in.size() < sizeof position + 1)
    throw InternalError("MPI sweep: a short result message from rank " + std::to_string(from));
  std::memcpy(&position, in.data(), sizeof position);
  return {static_cast<std::size_t>(position), in[sizeof position] != 0,
          std::string(in.data() + sizeof position + 1, in.size() - sizeof position - 1)};
}

}  // namespace

MpiSweepTeam::MpiSweepTeam() {
  int provided = 0;
  // Serialized: a follower's worker threads take turns at MPI under run_sweep's lock.
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
  if (provided < MPI_THREAD_SERIALIZED) {
    MPI_Finalize();
    throw InternalError("this MPI library does not support MPI_THREAD_SERIALIZED");
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSweepTeam::~MpiSweepTeam() { MPI_Finalize(); }

void MpiSweepTeam::abort(int exit_code) {
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::abort();  // MPI_Abort does not return; this tells the compiler so
}

std::vector<std::size_t> MpiSweepTeam::share_finished(std::vector<std::size_t> finished) {
  std::uint64_t count = finished.size();
  MPI_Bcast(&count, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  std::vector<std::uint64_t> wire(finished.begin(), finished.end());
  wire.resize(count);
  MPI_Bcast(wire.data(), static_cast<int>(count), MPI_UINT64_T, 0, MPI_COMM_WORLD);
  return {wire.begin(), wire.end()};
}

void MpiSweepTeam::serve(const std::function<std::optional<std::size_t>(int rank)>& take,
                         const std::function<void(int rank, const Finished&)>& record) {
  int active = size_ - 1;
  std::vector<char> buffer;
  while (active > 0) {
    MPI_Status status;
    MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
    int bytes = 0;
    MPI_Get_count(&status, MPI_BYTE, &bytes);
    buffer.resize(static_cast<std::size_t>(bytes));
    const int from = status.MPI_SOURCE;
    MPI_Recv(buffer.data(), bytes, MPI_BYTE, from, status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (status.MPI_TAG == kDone) {
      --active;
      continue;
    }
    if (status.MPI_TAG != kAsk)
      throw InternalError("MPI sweep: unexpected message tag " + std::to_string(status.MPI_TAG));
    if (!buffer.empty()) record(from, decode(buffer, from));
    const auto position = take(from);
    const std::uint64_t answer = position ? *position : kStop;
    MPI_Send(&answer, 1, MPI_UINT64_T, from, kAnswer, MPI_COMM_WORLD);
  }
}

std::optional<std::size_t> MpiSweepTeam::next(const std::optional<Finished>& previous) {
  const std::vector<char> message = previous ? encode(*previous) : std::vector<char>{};
  MPI_Send(message.data(), static_cast<int>(message.size()), MPI_BYTE, 0, kAsk, MPI_COMM_WORLD);
  std::uint64_t answer = kStop;
  MPI_Recv(&answer, 1, MPI_UINT64_T, 0, kAnswer, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (answer == kStop) return std::nullopt;
  return static_cast<std::size_t>(answer);
}

void MpiSweepTeam::done() { MPI_Send(nullptr, 0, MPI_BYTE, 0, kDone, MPI_COMM_WORLD); }

}  // namespace hybridsim::analysis
