// sim::LineAllocator — a std::vector allocator whose blocks start on a 64-byte cache line, for
// state laid out so that what one event reads shares a line (a vector's own blocks are only
// 16-byte aligned, so two 32-byte elements laid out together straddled a line half the time).
//   std::vector<Slot, sim::LineAllocator<Slot>> slots;  // slots.data() is 64-byte aligned
#pragma once
#include <cstddef>
#include <new>

namespace hybridsim::sim {

inline constexpr std::size_t kCacheLine = 64;

template <class T>
struct LineAllocator {
  using value_type = T;
  LineAllocator() = default;
  template <class U>
  LineAllocator(const LineAllocator<U>&) {}  // NOLINT: rebinding, as std::allocator does
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{kCacheLine}));
  }
  // Unsized: clang declares the sized aligned form only under -fsized-deallocation.
  void deallocate(T* p, std::size_t) { ::operator delete(p, std::align_val_t{kCacheLine}); }
  template <class U>
  bool operator==(const LineAllocator<U>&) const {
    return true;
  }
};

}  // namespace hybridsim::sim
