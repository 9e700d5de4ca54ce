#!/usr/bin/env bash
# The event queue's block and digit widths (sim/event_queue.h: kBlockBits, kDigitBits) as parameters:
# for each pair, a copy of sim/ with those widths, the hold model (tests/bench/hold_model.h's loop:
# N events pending, each reschedules itself an exponential delay of mean 1 us ahead) over that copy
# alone, and the queue's instructions an event by valgrind: the difference between 2,000,000 events and
# none after the same set-up and warm-up (2N events). N = 100,000 is the core's hold rate (dense: about
# 25 events a 256-ps block); N = 32 is about two events a 64-ns span, what the refills of the 128-GPU
# jittered step of bench_full_path (`Step/16/`) take on average (sim/README.md, "The full path against
# the event core"). Every pair must end at the same time as the others: the order does not depend on
# the widths.
# Instruction counts, not times: valgrind's counts do not move with the machine's load.
#
# Usage: tests/bench/queue_widths.sh [BLOCK:DIGIT ...]   (default 8:8 6:8 7:8 9:8 10:8 8:6 8:7)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/hold.cpp" <<'EOF'
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "sim/event_queue.h"
using namespace hybridsim::sim;
struct Holder final : EventHandler {
  EventQueue& q;
  const std::vector<std::int64_t>& d;
  std::size_t next = 0;
  Holder(EventQueue& queue, const std::vector<std::int64_t>& delays) : q(queue), d(delays) {}
  void on_event(std::uint64_t tag) override { q.schedule_after(Time::ps(d[next++ & 0xffff]), *this, tag); }
};
int main(int, char** argv) {
  const std::size_t n = std::strtoull(argv[1], nullptr, 10), count = std::strtoull(argv[2], nullptr, 10);
  std::mt19937_64 rng(20240611);  // hold_model.h's delays
  std::exponential_distribution<double> exp(1.0 / 1'000'000.0);
  std::vector<std::int64_t> d(1 << 16);
  for (auto& x : d) x = static_cast<std::int64_t>(exp(rng));
  EventQueue q;
  q.reserve(n);
  Holder h(q, d);
  for (std::size_t i = 0; i < n; ++i) q.schedule_after(Time::ps(d[h.next++ & 0xffff]), h, i);
  for (std::size_t i = 0; i < 2 * n + count; ++i) q.step();
  std::printf("%lld\n", static_cast<long long>(q.now().ps()));
}
EOF
instructions() {  # BINARY N COUNT: instructions, and the time the run ended
  local out
  out=$(valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$@" 2>&1)
  echo "$(echo "$out" | grep 'I *refs' | tr -d , | awk '{print $NF}') $(echo "$out" | grep -v '^==' | tail -1)"
}
echo "| block bits | digit bits | N = 100,000: instructions an event | N = 32 | ended at (ps; N = 100,000, N = 32) |"
echo "|---:|---:|---:|---:|---|"
for pair in "${@:-8:8 6:8 7:8 9:8 10:8 8:6 8:7}"; do
  for p in $pair; do
    block=${p%%:*} digit=${p##*:}
    dir=$work/b${block}d${digit}
    mkdir -p "$dir/sim"
    cp "$src"/sim/*.h "$src"/sim/event_queue.cpp "$src"/sim/event_queue_refill.cpp "$src"/sim/time.cpp \
      "$src"/sim/decimal.cpp "$dir/sim/"
    sed -i -e "s/static constexpr unsigned kBlockBits = 8;/static constexpr unsigned kBlockBits = $block;/" \
      -e "s/static constexpr unsigned kDigitBits = 8;/static constexpr unsigned kDigitBits = $digit;/" \
      "$dir/sim/event_queue.h"
    c++ -std=c++20 -O3 -DNDEBUG -I"$dir" "$work/hold.cpp" "$dir"/sim/*.cpp -o "$dir/hold"
    row="| $block | $digit |"
    ended=""
    for n in 100000 32; do
      read -r none _ < <(instructions "$dir/hold" $n 0)
      read -r all end < <(instructions "$dir/hold" $n 2000000)
      row="$row $(awk -v a="$all" -v b="$none" 'BEGIN { printf "%.1f", (a - b) / 2000000 }') |"
      ended="$ended $end"
    done
    echo "$row$ended |"
  done
done
