#include "analysis/output/created_folders.h"

#include <system_error>

namespace hybridsim::analysis {

void CreatedFolders::create(const std::filesystem::path& dir) {
  if (dir.empty()) return;
  // The missing ones, outermost first, found before creating so that only they are remembered.
  std::vector<std::filesystem::path> missing;
  std::error_code ec;
  for (std::filesystem::path p = dir; !p.empty() && !std::filesystem::exists(p, ec); p = p.parent_path()) {
    missing.insert(missing.begin(), p);
    if (p == p.parent_path()) break;
  }
  std::filesystem::create_directories(dir);
  const std::lock_guard lock(mutex_);
  made_.insert(made_.end(), missing.begin(), missing.end());
}

void CreatedFolders::keep() {
  const std::lock_guard lock(mutex_);
  made_.clear();
}

CreatedFolders::~CreatedFolders() {
  // remove() removes a folder only while it is empty: one that holds anything, this command's or
  // another's, stays.
  std::error_code ignored;
  for (auto it = made_.rbegin(); it != made_.rend(); ++it) std::filesystem::remove(*it, ignored);
}

}  // namespace hybridsim::analysis
