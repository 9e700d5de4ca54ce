#include "analysis/output/temp_files.h"

#include <array>
#include <atomic>
#include <csignal>
#include <cstring>

#include <unistd.h>

namespace hybridsim::analysis {

namespace {

// 128 paths at once is more than a sweep's threads hold (one trace each, one partial file, and the
// folders made for them).
constexpr int kSlots = 128;
constexpr std::size_t kPathBytes = 4096;

enum : int { kFree = 0, kFilling = 1, kReady = 2 };

struct Slot {
  std::atomic<int> state{kFree};
  bool folder = false;  // rmdir, after every file; else unlink
  std::array<char, kPathBytes> path{};
};

// Process-wide on purpose: a signal handler can reach nothing else.
Slot g_slots[kSlots];

void remove_and_reraise(int signal_number) {
  for (Slot& s : g_slots)
    if (s.state.load(std::memory_order_acquire) == kReady && !s.folder) ::unlink(s.path.data());
  // A folder goes once its subfolders have: each pass removes the empty ones (rmdir refuses the
  // others), until a pass removes none.
  bool gone[kSlots] = {};
  for (bool removed = true; removed;) {
    removed = false;
    for (int i = 0; i < kSlots; ++i) {
      const Slot& s = g_slots[i];
      if (gone[i] || s.state.load(std::memory_order_acquire) != kReady || !s.folder) continue;
      gone[i] = ::rmdir(s.path.data()) == 0;
      removed = removed || gone[i];
    }
  }
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

}  // namespace

void remove_temp_files_on_signals() {
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler == SIG_IGN) continue;
    struct sigaction action {};
    action.sa_handler = remove_and_reraise;
    sigemptyset(&action.sa_mask);
    ::sigaction(sig, &action, nullptr);
  }
}

namespace {

int track(std::string_view path, bool folder) {
  if (path.size() >= kPathBytes) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_slots[i].state.compare_exchange_strong(expected, kFilling, std::memory_order_acq_rel)) continue;
    g_slots[i].folder = folder;
    std::memcpy(g_slots[i].path.data(), path.data(), path.size());
    g_slots[i].path[path.size()] = '\0';
    g_slots[i].state.store(kReady, std::memory_order_release);
    return i;
  }
  return -1;
}

}  // namespace

int track_temp_file(std::string_view path) { return track(path, false); }

int track_created_folder(std::string_view path) { return track(path, true); }

void untrack_temp_file(int slot) {
  if (slot >= 0 && slot < kSlots) g_slots[slot].state.store(kFree, std::memory_order_release);
}

}  // namespace hybridsim::analysis
