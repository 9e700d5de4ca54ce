// Folders a command creates for its outputs before it knows it will finish (a trace written as the
// step runs, a sweep's points.partial.csv), removed again if it is refused: a refusal leaves nothing
// behind (issue 31). Only folders this object made are removed, deepest first, and only while empty.
//   CreatedFolders made;
//   made.create("out/traces");  // makes out/ and out/traces/ if they were missing
//   run();                      // throws: ~CreatedFolders removes out/traces/, then out/
//   made.keep();                // finished: they stay
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
  // Removes what it made that is still empty, unless keep() was called.
  ~CreatedFolders();

  // Makes `dir` and its missing parents, remembering those it made. Safe from several threads.
  // Throws std::filesystem::filesystem_error as create_directories does.
  void create(const std::filesystem::path& dir);
  // The command finished: every folder made stays.
  void keep();

 private:
  std::mutex mutex_;
  std::vector<std::filesystem::path> made_;  // in the order made: parents before children
};

}  // namespace hybridsim::analysis
