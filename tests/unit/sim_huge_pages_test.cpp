// sim::HugePageAllocator and sim::advise_huge_pages: a block of a quarter of a huge page or more
// takes whole 2-MiB pages, aligned, and the kernel is told they may be huge (the "hg" flag of its
// mapping in /proc/self/smaps, where the system has transparent huge pages); smaller blocks start
// on a cache line, as a LineAllocator's.
#include <doctest/doctest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sim/huge_pages.h"

using namespace hybridsim::sim;

namespace {
struct Line {  // the size of a network's link server or message slot
  std::int64_t words[8] = {};
};

// The VmFlags of the mapping holding `p`, or "" where /proc/self/smaps cannot tell.
std::string vm_flags_of(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= at && at < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

// Whether this system has transparent huge pages that madvise can ask for.
bool has_transparent_huge_pages() {
  std::ifstream enabled("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(enabled, modes);
  return !modes.empty() && modes.find("[never]") == std::string::npos;
}
}  // namespace

TEST_CASE("huge page allocator: a block from a quarter of a huge page on is whole huge pages, advised") {
  CHECK(huge_block_bytes(kHugeFrom - 1) == kHugeFrom - 1);
  CHECK(huge_block_bytes(kHugeFrom) == kHugePageBytes);
  CHECK(huge_block_bytes(kHugePageBytes) == kHugePageBytes);
  CHECK(huge_block_bytes(kHugePageBytes + 1) == 2 * kHugePageBytes);

  std::vector<Line, HugePageAllocator<Line>> small(10);
  CHECK(reinterpret_cast<std::uintptr_t>(small.data()) % kCacheLine == 0);

  std::vector<Line, HugePageAllocator<Line>> large(kHugeFrom / sizeof(Line));
  CHECK(reinterpret_cast<std::uintptr_t>(large.data()) % kHugePageBytes == 0);
  large.back().words[7] = 42;  // the whole block is the vector's to write
  if (has_transparent_huge_pages()) {
    const std::string flags = vm_flags_of(large.data());
    CAPTURE(flags);
    CHECK(flags.find(" hg") != std::string::npos);
  }
  // Grown past a huge page by the vector's doubling: its elements moved, the new block aligned.
  for (std::size_t i = large.size(); i <= kHugePageBytes / sizeof(Line); ++i) large.emplace_back();
  CHECK(reinterpret_cast<std::uintptr_t>(large.data()) % kHugePageBytes == 0);
  CHECK(large[kHugeFrom / sizeof(Line) - 1].words[7] == 42);
}

TEST_CASE("huge pages: advice covers the whole huge pages inside a block, and none of a smaller one") {
  std::vector<Line, HugePageAllocator<Line>> block(2 * kHugePageBytes / sizeof(Line));
  char* const start = reinterpret_cast<char*>(block.data());
  // From one byte in, the first huge page is not whole: only the second is advised (a kernel without
  // transparent huge pages may refuse the advice: then nothing is).
  const std::size_t advised = advise_huge_pages(start + 1, 2 * kHugePageBytes - 1);
  if (has_transparent_huge_pages())
    CHECK(advised == kHugePageBytes);
  else
    CHECK((advised == 0 || advised == kHugePageBytes));
  CHECK(advise_huge_pages(start + 1, kHugePageBytes) == 0);
  CHECK(advise_huge_pages(nullptr, 4 * kHugePageBytes) == 0);
}
