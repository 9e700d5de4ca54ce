// Tests of sim::Bytes and sim::Bandwidth: parsing, formatting, round trips and the one transfer-time
// rule, transfer_time = ceil(bytes * 10^12 / bytes_per_second) picoseconds.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/error.h"
#include "sim/units.h"

using hybridsim::InputError;
using hybridsim::InternalError;
using hybridsim::sim::Bandwidth;
using hybridsim::sim::Bytes;
using hybridsim::sim::format_bandwidth;
using hybridsim::sim::format_bytes;
using hybridsim::sim::parse_bandwidth;
using hybridsim::sim::parse_bytes;
using hybridsim::sim::Time;
using hybridsim::sim::transfer_time;

namespace {

template <class Parse>
std::string error_of(Parse parse, const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// The rule, computed independently: ceil(bytes * 10^12 / bw) in unsigned 128-bit arithmetic.
unsigned __int128 reference_ps(std::int64_t bytes, std::int64_t bytes_per_second) {
  const unsigned __int128 num = static_cast<unsigned __int128>(bytes) * 1'000'000'000'000ULL;
  const auto den = static_cast<unsigned __int128>(bytes_per_second);
  return num / den + (num % den != 0 ? 1 : 0);
}

}  // namespace

TEST_CASE("Bytes and Bandwidth constructors") {
  CHECK(Bytes::of(3).count() == 3);
  CHECK(Bytes::kib(1).count() == 1024);
  CHECK(Bytes::mib(1).count() == 1'048'576);
  CHECK(Bytes::gib(1).count() == 1'073'741'824);
  CHECK(Bytes::kib(1) + Bytes::of(1) == Bytes::of(1025));
  CHECK(Bandwidth::gb_per_second(25).bytes_per_second() == 25'000'000'000);
  CHECK(Bandwidth::gb_per_second(25).gb_per_second() == doctest::Approx(25.0));
  CHECK((Bandwidth::gb_per_second(25) * 4).bytes_per_second() == 100'000'000'000);
}

TEST_CASE("parse_bytes: decimal and binary prefixes, bits and bytes") {
  CHECK(parse_bytes("512 KiB") == Bytes::of(524'288));  // 512 * 2^10
  CHECK(parse_bytes("1 GiB") == Bytes::of(1'073'741'824));
  CHECK(parse_bytes("64 MB") == Bytes::of(64'000'000));  // MB = 10^6 B
  CHECK(parse_bytes("64MB") == Bytes::of(64'000'000));
  CHECK(parse_bytes("1 B") == Bytes::of(1));
  CHECK(parse_bytes("0 B") == Bytes::of(0));
  CHECK(parse_bytes("1.5 kB") == Bytes::of(1'500));
  CHECK(parse_bytes("1.5 KB") == Bytes::of(1'500));  // KB is accepted as kB
  CHECK(parse_bytes("2e3 B") == Bytes::of(2'000));
  CHECK(parse_bytes("1 TiB") == Bytes::of(1'099'511'627'776));
  CHECK(parse_bytes("2 TB") == Bytes::of(2'000'000'000'000));
  CHECK(parse_bytes("1.5 MiB") == Bytes::of(1'572'864));
  // Bits: 8 b = 1 B; 100 Gb = 10^11 bits = 12.5 * 10^9 B.
  CHECK(parse_bytes("8 b") == Bytes::of(1));
  CHECK(parse_bytes("100 Gb") == Bytes::of(12'500'000'000));
  CHECK(parse_bytes("8 Kib") == Bytes::of(1'024));
  CHECK(parse_bytes("1.000000000000000000000000000000000000 B") == Bytes::of(1));  // zeros only
}

TEST_CASE("parse_bytes rejects bad text, quoting it and listing the accepted forms") {
  for (const char* bad : {"", "abc", "5", "5 parsecs", "-1 B", "5 XB", "B", "5 KiBs"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_bytes(bad), InputError);
    const std::string message = error_of(parse_bytes, bad);
    CHECK(message.find("\"" + std::string(bad) + "\"") != std::string::npos);
    CHECK(message.find("KiB") != std::string::npos);
    CHECK(message.find("GB") != std::string::npos);
  }
  // Sizes must be whole bytes: 1.5 B, and 1 bit = 1/8 B, are not.
  // The last: a fractional digit beyond the ~30 digits kept exactly must still count.
  for (const char* fractional : {"1.5 B", "1 b", "0.0001 kB", "1.0000000000000000000000000000000001 B"}) {
    CAPTURE(fractional);
    const std::string message = error_of(parse_bytes, fractional);
    CHECK(message.find("\"" + std::string(fractional) + "\"") != std::string::npos);
    CHECK(message.find("whole number of bytes") != std::string::npos);
  }
  CHECK(error_of(parse_bytes, "1e30 B").find("too large") != std::string::npos);
}

TEST_CASE("parse_bandwidth: /s and ps forms, bits and bytes") {
  CHECK(parse_bandwidth("25 GB/s") == Bandwidth::bytes_per_second(25'000'000'000));
  // 100 Gb/s = 10^11 bits/s / 8 = 12.5 * 10^9 B/s (the header's example).
  CHECK(parse_bandwidth("100 Gb/s") == Bandwidth::bytes_per_second(12'500'000'000));
  // 12.5 GiB/s = 12.5 * 2^30 = 13,421,772,800 B/s exactly (decimal parsing, no floating point).
  CHECK(parse_bandwidth("12.5 GiB/s") == Bandwidth::bytes_per_second(13'421'772'800));
  CHECK(parse_bandwidth("100 Gbps") == Bandwidth::bytes_per_second(12'500'000'000));
  CHECK(parse_bandwidth("25 GBps") == Bandwidth::bytes_per_second(25'000'000'000));
  CHECK(parse_bandwidth("1 B/s") == Bandwidth::bytes_per_second(1));
  CHECK(parse_bandwidth("3.2e1 MB/s") == Bandwidth::bytes_per_second(32'000'000));
  CHECK(parse_bandwidth("900 GB/s") == Bandwidth::gb_per_second(900));
  // Rates are whole bytes per second, not rounded: 12 b/s = 1.5 B/s and 0.5 B/s are refused; 16 b/s is 2 B/s.
  CHECK(parse_bandwidth("16 b/s") == Bandwidth::bytes_per_second(2));
  CHECK_THROWS_WITH_AS(parse_bandwidth("12 b/s"),
                       "bandwidth \"12 b/s\" is not a whole number of bytes per second", InputError);
  CHECK_THROWS_AS(parse_bandwidth("0.5 B/s"), InputError);
}

TEST_CASE("parse_bandwidth rejects bad text, quoting it and listing the accepted forms") {
  for (const char* bad :
       {"", "abc", "25", "25 GB", "25 parsecs/s", "-1 GB/s", "/s", "25 /s", "25 GB/h", "25 Gbit/s"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_bandwidth(bad), InputError);
    const std::string message = error_of(parse_bandwidth, bad);
    CHECK(message.find("\"" + std::string(bad) + "\"") != std::string::npos);
    CHECK(message.find("GB/s") != std::string::npos);
    CHECK(message.find("Gbps") != std::string::npos);
  }
  CHECK(error_of(parse_bandwidth, "1e30 GB/s").find("too large") != std::string::npos);
}

TEST_CASE(
    "a unit the parsers do not know is named, with the units they do (issue 31: 1 PB/s said only 'bad')") {
  CHECK(error_of(parse_bandwidth, "1 PB/s") ==
        "unknown unit \"PB/s\" in \"1 PB/s\"; the rate units are B/s, kB/s, MB/s, GB/s, TB/s, KiB/s ... "
        "TiB/s, the same with b for bits (Gb/s), or Gbps/GBps");
  CHECK(error_of(parse_bandwidth, "25").starts_with("no unit in \"25\"; the rate units are B/s, "));
  CHECK(error_of(hybridsim::sim::parse_bytes, "4 PiB")
            .starts_with("unknown unit \"PiB\" in \"4 PiB\"; the size units are B, kB"));
  CHECK(error_of(hybridsim::sim::parse_time, "5 days") ==
        "unknown unit \"days\" in \"5 days\"; the time units are ps, ns, us (or µs), ms, s");
  // Text that is not a number at all still lists the whole form.
  CHECK(error_of(parse_bandwidth, "lots")
            .starts_with("bad bandwidth \"lots\": expected a non-negative number"));
}

TEST_CASE("a leading + is refused by every unit parser, saying the sign is what it does not take") {
  // The grammar reads no sign: "+25 GB/s" was refused as "bad bandwidth ...: expected a non-negative
  // number", which +25 is. Each parser now names the sign and the text to write instead.
  CHECK(error_of(parse_bandwidth, "+25 GB/s") ==
        "\"+25 GB/s\" has a sign, which a bandwidth does not take: write \"25 GB/s\"");
  CHECK(error_of(hybridsim::sim::parse_bytes, " +512 KiB") ==
        "\"+512 KiB\" has a sign, which a size does not take: write \"512 KiB\"");
  CHECK(error_of(hybridsim::sim::parse_time, "+.5 us") ==
        "\"+.5 us\" has a sign, which a time does not take: write \".5 us\"");
  // A "+" not before a number is no sign to explain: the form is listed as before.
  CHECK(error_of(parse_bandwidth, "+fast").starts_with("bad bandwidth \"+fast\": expected a non-negative"));
  CHECK(error_of(hybridsim::sim::parse_time, "-1 us")
            .starts_with("bad time \"-1 us\": expected a non-negative"));
  CHECK(parse_bandwidth("25 GB/s") == Bandwidth::gb_per_second(25));
}

TEST_CASE("format_bytes picks the shortest exact form") {
  CHECK(format_bytes(Bytes::of(0)) == "0 B");
  CHECK(format_bytes(Bytes::of(1)) == "1 B");
  CHECK(format_bytes(Bytes::kib(512)) == "512 KiB");  // shorter than "524.288 kB"
  CHECK(format_bytes(Bytes::of(1'500'000)) == "1.5 MB");  // the header's example
  CHECK(format_bytes(Bytes::of(1'500)) == "1500 B");      // "1.5 kB" is no shorter: bytes win ties
  CHECK(format_bytes(Bytes::of(64'000'000)) == "64 MB");
  CHECK(format_bytes(Bytes::gib(1)) == "1 GiB");
  CHECK(format_bytes(Bytes::of(1'023)) == "1023 B");  // "1.023 kB" is longer
}

TEST_CASE("format_bandwidth uses decimal units") {
  CHECK(format_bandwidth(Bandwidth::gb_per_second(25)) == "25 GB/s");
  CHECK(format_bandwidth(Bandwidth::bytes_per_second(12'500'000'000)) == "12.5 GB/s");
  CHECK(format_bandwidth(Bandwidth::bytes_per_second(13'421'772'800)) == "13.4217728 GB/s");
  CHECK(format_bandwidth(Bandwidth::bytes_per_second(999)) == "999 B/s");
  CHECK(format_bandwidth(Bandwidth::bytes_per_second(0)) == "0 B/s");
  CHECK(format_bandwidth(Bandwidth::bytes_per_second(2'000'000'000'000)) == "2 TB/s");
}

TEST_CASE("format_bytes and format_bandwidth round-trip through the parsers") {
  std::vector<std::int64_t> values = {0,         1,         999,       1'000,     1'023,
                                      1'024,     1'500,     524'288,   1LL << 30, 1LL << 40,
                                      INT64_MAX, INT64_MAX - 1};
  std::mt19937_64 rng(777);
  for (int i = 0; i < 50'000; ++i) {
    const std::uint64_t r = rng() >> 1;
    values.push_back(static_cast<std::int64_t>(r >> (rng() % 63)));
    values.push_back(static_cast<std::int64_t>(rng() % 4096) << (rng() % 40));  // binary-ish sizes
  }
  for (const std::int64_t v : values) {
    const std::string b = format_bytes(Bytes::of(v));
    const std::string bw = format_bandwidth(Bandwidth::bytes_per_second(v));
    if (parse_bytes(b) != Bytes::of(v) || parse_bandwidth(bw) != Bandwidth::bytes_per_second(v)) {
      CAPTURE(v);
      CAPTURE(b);
      CAPTURE(bw);
      FAIL("format does not round-trip");
    }
  }
  CHECK(values.size() == 100'012);
}

TEST_CASE("transfer_time is exact and rounds up") {
  // 512 KiB at 25 GB/s: 524,288 * 10^12 / (25 * 10^9) = 20,971,520 ps exactly (the header's example).
  CHECK(transfer_time(Bytes::kib(512), parse_bandwidth("25 GB/s")) == Time::ps(20'971'520));
  // 1 GB at 1 GB/s is 1 s.
  CHECK(transfer_time(Bytes::of(1'000'000'000), Bandwidth::gb_per_second(1)) == Time::s(1));
  // 1 B at 3 B/s = 333,333,333,333.3 ps -> rounds up to ...334: a message never arrives early.
  CHECK(transfer_time(Bytes::of(1), Bandwidth::bytes_per_second(3)) == Time::ps(333'333'333'334));
  // 1 B at 3 TB/s = 1/3 ps -> 1 ps; 0 B takes no time.
  CHECK(transfer_time(Bytes::of(1), Bandwidth::bytes_per_second(3'000'000'000'000)) == Time::ps(1));
  CHECK(transfer_time(Bytes::of(0), Bandwidth::gb_per_second(1)) == Time::zero());
  // 1 GiB at 12.5 GiB/s = 0.08 s exactly.
  CHECK(transfer_time(Bytes::gib(1), parse_bandwidth("12.5 GiB/s")) == Time::ms(80));
}

TEST_CASE("transfer_time: fast path and 128-bit path agree with the rule") {
  // Sizes up to 9,000,000 B take a 64-bit fast path; larger ones 128-bit arithmetic. Both must give
  // ceil(bytes * 10^12 / bw) for every bandwidth, including very large ones.
  std::vector<std::int64_t> sizes = {0, 1, 2, 1'023, 8'999'998, 8'999'999, 9'000'000, 9'000'001,
                                     1LL << 40};
  std::vector<std::int64_t> rates = {1, 3, 7, 1'000'000'007, 25'000'000'000, 13'421'772'800,
                                     1'000'000'000'000'000'000, INT64_MAX};
  std::mt19937_64 rng(99);
  for (int i = 0; i < 2'000; ++i) {
    sizes.push_back(static_cast<std::int64_t>(rng() % 18'000'000));
    rates.push_back(static_cast<std::int64_t>((rng() >> 1) >> (rng() % 63)) + 1);
  }
  int checked = 0;
  for (const std::int64_t b : sizes) {
    for (const std::int64_t r : rates) {
      const unsigned __int128 exact = reference_ps(b, r);
      if (exact > static_cast<unsigned __int128>(INT64_MAX)) continue;  // too long for Time: see below
      const auto expected = static_cast<std::int64_t>(exact);
      const Time got = transfer_time(Bytes::of(b), Bandwidth::bytes_per_second(r));
      if (got.ps() != expected) {
        CAPTURE(b);
        CAPTURE(r);
        CAPTURE(got.ps());
        CAPTURE(expected);
        FAIL("transfer_time disagrees with ceil(bytes * 10^12 / bw)");
      }
      ++checked;
    }
  }
  CHECK(checked > 1'000'000);
}

TEST_CASE("transfer_time errors") {
  CHECK_THROWS_AS(transfer_time(Bytes::of(1), Bandwidth::bytes_per_second(0)), InternalError);
  // 10^8 B at 1 B/s = 10^20 ps: longer than Time can hold.
  CHECK_THROWS_AS(transfer_time(Bytes::of(100'000'000), Bandwidth::bytes_per_second(1)),
                  std::overflow_error);
}
