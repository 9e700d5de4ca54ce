// Progress lines while `hybridsim import` reads a large file (a Kineto trace of hundreds of MB takes
// seconds): the reader in workloads/import streams the file (a large trace in passes, each counted),
// so the bytes this process has read since the import began (/proc/self/io's rchar, Linux) stand for
// how far it got, and no hook inside the reader is needed. Elsewhere (no /proc) nothing is printed.
// A thread polls a few times a second and prints through ProgressEstimate
// (analysis/output/progress_estimate.h).
//   ReadProgress lines(&std::cerr, "import", file_size, 3);   // stops when it goes out of scope
//   const auto imported = workloads::import_kineto(path, options);
#pragma once
#include <condition_variable>
#include <cstdint>
#include <iosfwd>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "analysis/output/progress_estimate.h"

namespace hybridsim::analysis {

// Bytes this process has read so far (rchar in /proc/self/io); nullopt where that is not known.
std::optional<std::int64_t> bytes_read_by_process();

class ReadProgress {
 public:
  // `out` null or `size` <= 0: no thread, no lines. `passes`: how many times the file is read.
  ReadProgress(std::ostream* out, std::string label, std::int64_t size, int passes = 1);
  ~ReadProgress();
  // The file is read `passes` times in all, not the constructor's (the reader found out as it went).
  void set_passes(int passes);
  ReadProgress(const ReadProgress&) = delete;
  ReadProgress& operator=(const ReadProgress&) = delete;

 private:
  void poll();
  ProgressEstimate progress_;
  std::string what_;
  std::int64_t size_ = 0;
  std::int64_t start_ = 0;
  std::mutex lock_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace hybridsim::analysis
