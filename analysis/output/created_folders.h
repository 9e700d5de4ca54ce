// Folders a command creates for its outputs before it knows it will finish (a trace written as the
// step runs, a sweep's points.partial.csv), and files it finished writing before the command finished
// as a whole (a run's trace, committed before its summaries are written), removed again if it is
// refused, fails or is stopped by a signal: a refusal leaves nothing behind, and a run's outputs
// appear all or none (issue 31). Only folders this object made are removed, deepest first, and only
// while empty.
//   CreatedFolders made;
//   made.create("out/traces");             // makes out/ and out/traces/ if they were missing
//   made.written("out/traces/t.json");     // the trace, whole
//   write_summaries();                     // throws: ~CreatedFolders removes t.json, out/traces/, out/
//   made.keep();                           // finished: they stay
#pragma once
#include <filesystem>
#include <mutex>
#include <vector>

namespace hybridsim::analysis {

class CreatedFolders {
 public:
  CreatedFolders() = default;
  CreatedFolders(const CreatedFolders&) = delete;
  CreatedFolders& operator=(const CreatedFolders&) = delete;
  // Removes the files written and the folders made that are then empty, unless keep() was called.
  ~CreatedFolders();

  // Makes `dir` and its missing parents, remembering those it made. Safe from several threads.
  // Throws std::filesystem::filesystem_error as create_directories does.
  void create(const std::filesystem::path& dir);
  // A file of the command's, whole, that goes again if the command does not finish. Safe from several
  // threads.
  void written(const std::filesystem::path& file);
  // The command finished: every folder made and file written stays.
  void keep();

 private:
  std::mutex mutex_;
  std::vector<std::filesystem::path> made_;     // in the order made: parents before children
  std::vector<std::filesystem::path> written_;  // files, removed before the folders
  std::vector<int> signal_slots_;               // the same paths in the signal handler's registry
};

}  // namespace hybridsim::analysis
