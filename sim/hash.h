// Small, fixed hashes shared by the layers (deterministic across runs and machines, unlike
// std::hash): hash_combine folds a value into a running hash (Boost's hash_combine constant and
// shifts, on 64 bits); splitmix64 is the finalizer of splitmix64 (Steele, Lea and Flood 2014), a
// good mixer for counter-based random numbers.
//   std::uint64_t h = sim::hash_combine(sim::hash_combine(0, a), b);
#pragma once
#include <cstdint>

namespace hybridsim::sim {

constexpr std::uint64_t hash_combine(std::uint64_t h, std::uint64_t v) {
  return h ^ (v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2));
}

constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace hybridsim::sim
