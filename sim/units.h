// Quantities of data and rates as strong integer types, and the one grammar that parses and prints
// them. Bytes is a count of bytes; Bandwidth is bytes per second. GB = 10^9 bytes, GiB = 2^30 bytes,
// Gb = 10^9 bits.   parse_bandwidth("100 Gb/s") == Bandwidth::bytes_per_second(12'500'000'000)
//   transfer_time(Bytes::kib(512), parse_bandwidth("25 GB/s")) == Time::ps(20'971'520)
#pragma once
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "sim/time.h"

namespace hybridsim::sim {

class Bytes {
 public:
  constexpr Bytes() = default;
  static constexpr Bytes of(std::int64_t n) { return Bytes(n); }
  static constexpr Bytes kib(std::int64_t n) { return Bytes(n * 1024); }
  static constexpr Bytes mib(std::int64_t n) { return Bytes(n * 1024 * 1024); }
  static constexpr Bytes gib(std::int64_t n) { return Bytes(n * 1024 * 1024 * 1024); }
  constexpr std::int64_t count() const { return n_; }
  constexpr Bytes operator+(Bytes o) const { return Bytes(n_ + o.n_); }
  constexpr Bytes operator-(Bytes o) const { return Bytes(n_ - o.n_); }
  constexpr Bytes& operator+=(Bytes o) { n_ += o.n_; return *this; }
  constexpr auto operator<=>(const Bytes&) const = default;

 private:
  constexpr explicit Bytes(std::int64_t n) : n_(n) {}
  std::int64_t n_ = 0;
};

class Bandwidth {
 public:
  constexpr Bandwidth() = default;
  static constexpr Bandwidth bytes_per_second(std::int64_t v) { return Bandwidth(v); }
  static constexpr Bandwidth gb_per_second(std::int64_t v) { return Bandwidth(v * 1'000'000'000); }
  constexpr std::int64_t bytes_per_second() const { return bps_; }
  constexpr double gb_per_second() const { return static_cast<double>(bps_) * 1e-9; }
  constexpr Bandwidth operator*(std::int64_t k) const { return Bandwidth(bps_ * k); }
  constexpr auto operator<=>(const Bandwidth&) const = default;

 private:
  constexpr explicit Bandwidth(std::int64_t v) : bps_(v) {}
  std::int64_t bps_ = 0;
};

// The one place transfer time is computed: ceil(bytes * 10^12 / bytes_per_second) picoseconds,
// exact in 128-bit arithmetic. Rounding up means a message never finishes early.
Time transfer_time(Bytes bytes, Bandwidth bw);

// Parsers: a decimal number (optionally with exponent), optional spaces, a unit. Throw InputError
// quoting the text and listing accepted forms.
//   sizes:      B, kB/KB, MB, GB, TB (10^3k), KiB, MiB, GiB, TiB (2^10k); with 'b' instead of 'B' bits.
//   bandwidths: a size unit + "/s" (25 GB/s, 100 Gb/s, 12.5 GiB/s) or + "ps" (100 Gbps).
Bytes parse_bytes(std::string_view text);
Bandwidth parse_bandwidth(std::string_view text);

// Exact, round-trippable forms ("512 KiB", "1.5 MB", "12.5 GB/s").
std::string format_bytes(Bytes b);
std::string format_bandwidth(Bandwidth bw);
// Short human forms for tables ("25.0 MB", "12.5 GB/s", "1.23 ms"); not round-trippable.
std::string human_bytes(Bytes b);
std::string human_time(Time t);

}  // namespace hybridsim::sim
