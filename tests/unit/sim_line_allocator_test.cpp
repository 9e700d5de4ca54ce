// sim::LineAllocator: every block a vector takes from it starts on a 64-byte line, however the
// vector grows (std::allocator's blocks are 16-byte aligned, so a 32-byte element pair laid out at
// an even index straddled two lines whenever the block started mid-line).
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "sim/line_allocator.h"

using namespace hybridsim::sim;

namespace {
struct Pair32 {  // the size of a tree's child slot
  std::int64_t a = 0, b = 0, c = 0, d = 0;
};
}  // namespace

TEST_CASE("line allocator: a vector's block starts on a line as it grows, and after a reserve") {
  std::vector<Pair32, LineAllocator<Pair32>> v;
  for (int i = 0; i < 200; ++i) {
    v.emplace_back();
    CAPTURE(i);
    CHECK(reinterpret_cast<std::uintptr_t>(v.data()) % kCacheLine == 0);
  }
  // Each reallocation copied the elements into the new block.
  v[199].d = 7;
  v.reserve(1000);
  CHECK(reinterpret_cast<std::uintptr_t>(v.data()) % kCacheLine == 0);
  CHECK(v.size() == 200);
  CHECK(v[199].d == 7);
  // Small types and a rebound allocator (a vector of bytes) as well.
  std::vector<char, LineAllocator<char>> bytes(3);
  CHECK(reinterpret_cast<std::uintptr_t>(bytes.data()) % kCacheLine == 0);
}
