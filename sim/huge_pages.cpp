#include "sim/huge_pages.h"

#include <cstdint>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace hybridsim::sim {

std::size_t advise_huge_pages(void* block, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const auto begin = reinterpret_cast<std::uintptr_t>(block);
  const std::uintptr_t first = (begin + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  const std::uintptr_t last = (begin + bytes) & ~(kHugePageBytes - 1);
  if (block == nullptr || last <= first) return 0;
  if (madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE) != 0) return 0;
  return last - first;
#else
  (void)block;
  (void)bytes;
  return 0;
#endif
}

namespace {
std::align_val_t alignment_of(std::size_t bytes) {
  return static_cast<std::align_val_t>(bytes < kHugeFrom ? kCacheLine : kHugePageBytes);
}
}  // namespace

void* allocate_hot_block(std::size_t bytes) {
  const std::size_t whole = huge_block_bytes(bytes);
  void* block = ::operator new(whole, alignment_of(bytes));
  if (bytes < kHugeFrom) return block;
  advise_huge_pages(block, whole);  // before the first touch: the vector constructs into it next
  return block;
}

void free_hot_block(void* block, std::size_t bytes) {
  // Unsized: clang declares the sized aligned form only under -fsized-deallocation.
  ::operator delete(block, alignment_of(bytes));
}

}  // namespace hybridsim::sim
