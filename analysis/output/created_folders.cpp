#include "analysis/output/created_folders.h"

#include <system_error>

#include "analysis/output/temp_files.h"

namespace hybridsim::analysis {

void CreatedFolders::create(const std::filesystem::path& dir) {
  if (dir.empty()) return;
  const std::lock_guard lock(mutex_);  // two threads making the same folder remember it once
  // The missing ones, outermost first, found before creating so that only they are remembered.
  std::vector<std::filesystem::path> missing;
  std::error_code ec;
  for (std::filesystem::path p = dir; !p.empty() && !std::filesystem::exists(p, ec); p = p.parent_path()) {
    missing.insert(missing.begin(), p);
    if (p == p.parent_path()) break;
  }
  // Registered before they exist: a signal while they are made removes them too (rmdir of one not
  // yet made fails harmlessly).
  for (const auto& p : missing) signal_slots_.push_back(track_created_folder(p.string()));
  made_.insert(made_.end(), missing.begin(), missing.end());
  std::filesystem::create_directories(dir);
}

void CreatedFolders::written(const std::filesystem::path& file) {
  const std::lock_guard lock(mutex_);
  signal_slots_.push_back(track_temp_file(file.string()));
  written_.push_back(file);
}

void CreatedFolders::keep() {
  const std::lock_guard lock(mutex_);
  for (const int slot : signal_slots_) untrack_temp_file(slot);
  signal_slots_.clear();
  made_.clear();
  written_.clear();
}

CreatedFolders::~CreatedFolders() {
  // remove() removes a folder only while it is empty: one that holds anything, this command's or
  // another's, stays.
  std::error_code ignored;
  for (const auto& file : written_) std::filesystem::remove(file, ignored);
  for (auto it = made_.rbegin(); it != made_.rend(); ++it) std::filesystem::remove(*it, ignored);
  for (const int slot : signal_slots_) untrack_temp_file(slot);
}

}  // namespace hybridsim::analysis
