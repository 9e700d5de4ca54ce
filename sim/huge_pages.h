// sim::HugePageAllocator — a std::vector allocator for the large arrays that the event loop walks
// (a network's links and messages): a block of at least kHugeFrom bytes takes whole 2-MiB pages,
// advised MADV_HUGEPAGE, so that the loop's scattered reads of it miss the TLB less; smaller ones
// start on a cache line, as sim::LineAllocator's.
//   std::vector<Server, sim::HugePageAllocator<Server>> servers(links);
//
// Why in the library: the hybridsim command and the benchmarks start with glibc's malloc on huge
// pages (analysis/cli/huge_pages.h re-executes them with GLIBC_TUNABLES), but the Python module and
// other programs that link sim/ cannot re-execute their interpreter and ran the loop on 4-KiB pages
// (tests/bench/MEASUREMENTS.md, perf3). Advice, not state: it changes no result, and where
// transparent huge pages are off (`never`) or there is no madvise the block is an ordinary one.
#pragma once
#include <cstddef>

#include "sim/line_allocator.h"

namespace hybridsim::sim {

inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
// From a quarter of a huge page on, a block is rounded up to whole huge pages: at most 4× its bytes
// in memory (only for blocks of 512 KiB to 2 MiB; above, less than 2×), for a few blocks a network.
inline constexpr std::size_t kHugeFrom = kHugePageBytes / 4;

// Advises the whole 2-MiB pages inside [block, block + bytes) MADV_HUGEPAGE (their first touch then
// faults in a huge page where the kernel has one) and returns how many bytes were advised: 0 for a
// block holding no whole huge page, or where the advice is not available or refused.
std::size_t advise_huge_pages(void* block, std::size_t bytes);

// What the allocator below takes for `bytes`: whole huge pages from kHugeFrom on, else the bytes.
constexpr std::size_t huge_block_bytes(std::size_t bytes) {
  return bytes < kHugeFrom ? bytes : (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
}
// The allocator's blocks, out of line: huge_block_bytes(bytes) aligned to a huge page and advised
// from kHugeFrom on, else `bytes` on a cache line. Throws std::bad_alloc. Freed with the same bytes.
void* allocate_hot_block(std::size_t bytes);
void free_hot_block(void* block, std::size_t bytes);

template <class T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) {}  // NOLINT: rebinding, as std::allocator does
  T* allocate(std::size_t n) { return static_cast<T*>(allocate_hot_block(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) { free_hot_block(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
};

}  // namespace hybridsim::sim
