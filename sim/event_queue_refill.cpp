// sim::EventQueue's refill: taking the lowest bucket of the radix heap into the front (see the
// comment at the top of event_queue.cpp for the order this keeps).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

#include "sim/event_queue.h"

namespace hybridsim::sim {

namespace {
// A level-1 bucket with fewer events (at most kFewMax, in fact) goes to the front whole (take_few):
// the radix sort's two 256-entry histograms would cost more than it saves.
constexpr std::uint32_t kStageMin = 64;

// A bucket's entries in order: its first, then its chunks'. With `fetch`, each chunk fetches the
// next while it is read: a bucket's chunks are scattered, and out of cache by the time it comes up
// (the hardware prefetcher does not cross into the next one).
template <bool fetch = false, class F>
void for_each_entry(const auto& bucket, std::uint32_t chunk_entries, F&& f) {
  if (bucket.count == 0) return;
  f(bucket.first);
  for (const auto* c = bucket.head; c != nullptr; c = c->next) {
    if (const auto* next = c->next; fetch && next != nullptr) {
      const char* p = reinterpret_cast<const char*>(next);
      for (std::size_t off = 0; off < sizeof(*next); off += 64) __builtin_prefetch(p + off);
    }
    const std::uint32_t n = c == bucket.tail ? bucket.tail_size : chunk_entries;
    for (std::uint32_t k = 0; k < n; ++k) f(c->entries[k]);
  }
}

// The check inline, the growth out of line: a refill calls it once or twice and, in a step's sparse
// pattern (two events a refill), the call as a whole cost 42 instructions of about 300 a refill.
template <class V>
[[gnu::cold, gnu::noinline]] void grow(V& v, std::size_t n) {
  v.resize(std::max(n, 2 * v.size()));
}
template <class V>
void ensure_size(V& v, std::size_t n) {
  if (v.size() < n) [[unlikely]] grow(v, n);
}
// Inserts `e` into the sorted out[0, n): stable, it moves only past later times.
template <class E>
void insert_sorted(E* out, std::size_t n, const E& e) {
  std::size_t j = n;
  for (; j > 0 && out[j - 1].time > e.time; --j) out[j] = out[j - 1];
  out[j] = e;
}
// Exactly N entries (a bucket's first and its first chunk's) into out[0, N) by their ranks, stable:
// entry i goes to #{j: t_j < t_i} + #{j < i: t_j == t_i}. No branch depends on the times: a
// jittered step's two or three events of a 64-ns span come in no order, and insertion's loop
// mispredicted on them (tests/bench/MEASUREMENTS.md, perf4).
template <std::size_t N, class E, class B>
std::size_t rank_few(E* out, const B& bucket) {
  const E* rest = bucket.head->entries.data();
  std::array<std::uint64_t, N> time;
  time[0] = bucket.first.time;
  for (std::size_t i = 1; i < N; ++i) time[i] = rest[i - 1].time;
  std::array<std::size_t, N> rank{};
  for (std::size_t i = 0; i < N; ++i)
    for (std::size_t j = 0; j < N; ++j)
      rank[i] += static_cast<std::size_t>(j < i ? time[j] <= time[i] : time[j] < time[i]);
  out[rank[0]] = bucket.first;
  for (std::size_t i = 1; i < N; ++i) out[rank[i]] = rest[i - 1];
  return N;
}
// A bucket of a few entries (at most kInsertionSortMax, checked by the caller) sorted into `front`
// by insertion, stable as sort_into_front; returns their number. A bucket takes a second chunk only
// when its first is full, so they are its first entry and its first chunk's: read straight from
// there, neither gathered into scratch nor walked chunk by chunk (in a step's sparse pattern, about
// two events a refill, that overhead was a third of the refill's instructions).
template <class E, class B>
std::size_t insert_few(std::vector<E>& front, const B& bucket) {
  const std::size_t n = bucket.count;
  ensure_size(front, n);
  E* out = front.data();
  if (n == 2) return rank_few<2>(out, bucket);
  if (n == 3) return rank_few<3>(out, bucket);
  out[0] = bucket.first;
  for (std::size_t i = 1; i < n; ++i) insert_sorted(out, i, bucket.head->entries[i - 1]);
  return n;
}
// More entries than insertion suits, up to a first entry and one chunk's (64), all of one 64-ns span
// (their times agree above the low `span_bits`, 16): each entry's place in the front is its rank,
// counted without a branch on the keys. Entries of equal time keep the bucket's order (scheduling
// order): entry i's rank is i - #{j < i: t_j > t_i} + #{j > i: t_j < t_i}. The keys are the times'
// low 16 bits, biased so that a signed compare orders them, in 16-bit lanes: eight entries' ranks
// are one vector, counted against each entry's key held in every lane. With the entries' indices
// in the keys (32-bit lanes, four to a vector, one entry's rank at a time, its lanes then summed)
// the 1,024-GPU jittered step spent 1.6 times the instructions here (tests/bench/MEASUREMENTS.md,
// perf of 2026-12-06). std::sort of the keys took fewer instructions but mispredicted, and the
// hold model at N = 1,000 (about 64 events a span) ran 15% slower with it than spreading. That
// step's spans come in bursts: half its events come in spans of 17 to 63.
template <unsigned span_bits, class E, class B>
[[gnu::noinline]] std::size_t sort_few(std::vector<E>& front, const B& bucket) {
  static_assert(span_bits <= 16, "a key is 16 bits");
  // Eight lanes: SSE2, the baseline of an x86-64 build without -march.
  using Lanes = std::int16_t __attribute__((vector_size(16)));
  constexpr std::size_t kLanes = 8;
  constexpr std::size_t kMax = 64;
  constexpr std::uint64_t kSpanMask = (std::uint64_t{1} << span_bits) - 1;
  constexpr Lanes kLane = {0, 1, 2, 3, 4, 5, 6, 7};
  using LaneMasks = std::array<std::array<std::int16_t, kLanes>, kLanes>;
  // kAfter[q]: -1 in the lanes after lane q; kBefore[q]: in the lanes before it.
  alignas(16) static constexpr LaneMasks kAfter = [] {
    LaneMasks m{};
    for (std::size_t q = 0; q < kLanes; ++q)
      for (std::size_t l = q + 1; l < kLanes; ++l) m[q][l] = -1;
    return m;
  }();
  alignas(16) static constexpr LaneMasks kBefore = [] {
    LaneMasks m{};
    for (std::size_t q = 0; q < kLanes; ++q)
      for (std::size_t l = 0; l < q; ++l) m[q][l] = -1;
    return m;
  }();
  const auto lanes = [](const std::array<std::int16_t, kLanes>& a) {
    Lanes v;
    std::memcpy(&v, a.data(), sizeof v);
    return v;
  };
  const auto splat = [](std::int16_t x) { return Lanes{x, x, x, x, x, x, x, x}; };
  const auto key_of = [](std::uint64_t time) {
    return static_cast<std::int16_t>(static_cast<std::uint16_t>((time & kSpanMask) ^ 0x8000u));
  };
  const std::size_t n = bucket.count;
  const std::size_t groups = (n + kLanes - 1) / kLanes;
  std::array<Lanes, kMax / kLanes> keys;  // entry i's key in lane i % 8 of keys[i / 8]
  std::array<Lanes, kMax> each;           // entry j's key in every lane
  auto* key = reinterpret_cast<std::int16_t*>(keys.data());
  const E* chunk = bucket.head->entries.data();
  key[0] = key_of(bucket.first.time);
  each[0] = splat(key[0]);
  for (std::size_t j = 1; j < n; ++j) {
    key[j] = key_of(chunk[j - 1].time);
    each[j] = splat(key[j]);
  }
  // The last group's lanes past n: the top key, which no key is above (so no entry counts them), and
  // the loops below run whole groups (fewer loop exits to mispredict); their own ranks are not read.
  constexpr std::int16_t kTop = std::numeric_limits<std::int16_t>::max();
  for (std::size_t j = n; j < groups * kLanes; ++j) {
    key[j] = kTop;
    each[j] = splat(kTop);
  }
  std::array<Lanes, kMax / kLanes> rank;
  for (std::size_t g = 0; g < groups; ++g) {
    const Lanes k = keys[g];
    const Lanes* own = &each[g * kLanes];
    Lanes r = kLane + splat(static_cast<std::int16_t>(g * kLanes));  // i
    for (std::size_t h = 0; h < g; ++h)
#pragma GCC unroll 8
      for (std::size_t l = 0; l < kLanes; ++l) r += each[h * kLanes + l] > k;  // j < i: -1 if t_j > t_i
#pragma GCC unroll 8
    for (std::size_t l = 0; l < kLanes; ++l)
      r += ((own[l] > k) & lanes(kAfter[l])) - ((k > own[l]) & lanes(kBefore[l]));
    for (std::size_t h = g + 1; h < groups; ++h)
#pragma GCC unroll 8
      for (std::size_t l = 0; l < kLanes; ++l) r -= k > each[h * kLanes + l];  // j > i: +1 if t_j < t_i
    rank[g] = r;
  }
  ensure_size(front, n);
  E* out = front.data();
  const auto* at = reinterpret_cast<const std::int16_t*>(rank.data());
  out[static_cast<std::size_t>(at[0])] = bucket.first;
  for (std::size_t i = 1; i < n; ++i) out[static_cast<std::size_t>(at[i])] = chunk[i - 1];
  return n;
}
}  // namespace

std::size_t EventQueue::gather(const Bucket& bucket, std::size_t at) {
  ensure_size(scratch_, at + bucket.count);
  Entry* out = scratch_.data() + at;
  for_each_entry(bucket, kChunkEntries, [&](const Entry& e) { *out++ = e; });
  return at + bucket.count;
}

void EventQueue::sort_into_front(std::size_t n) {
  static_assert(kInsertionSortMax < kChunkEntries, "insert_few: a few entries are one chunk's");
  ensure_size(front_, n);
  const Entry* in = scratch_.data();
  Entry* out = front_.data();
  // Counting sort on the time within the block: stable, linear. The entries are one block's (the
  // only caller's), and more than kInsertionSortMax (fewer are sorted by insertion before this).
  std::array<std::uint32_t, kBlockMask + 2> start{};
  for (std::size_t i = 0; i < n; ++i) ++start[(in[i].time & kBlockMask) + 1];
  for (std::size_t i = 1; i < start.size(); ++i) start[i] += start[i - 1];
  for (std::size_t i = 0; i < n; ++i) out[start[in[i].time & kBlockMask]++] = in[i];
  front_data_ = out;
  front_pos_ = 0;
  front_end_ = n;
  front_last_ = out[n - 1].time;
}

void EventQueue::own_front() {
  const std::size_t n = front_end_ - front_pos_;
  // Room for as many again as it holds: with room for one more, a front of n events at one time
  // whose handlers each schedule one more into it was copied whole at every event (n entries an
  // event: a 65,536-GPU tree's 128 B size in `collective` ran 27 s at load 13 without an event
  // done, 90% of it this copy; tests/bench/MEASUREMENTS.md, mem). Doubled, a copy is paid for by
  // the n events scheduled before the next one.
  const std::size_t room = std::max<std::size_t>(64, 2 * n);
  front_moved_ += n;
  if (front_data_ != front_.data()) {  // a staged part: copy what is left of it
    ensure_size(front_, room);
    std::copy(front_data_ + front_pos_, front_data_ + front_end_, front_.begin());
  } else {  // front_ is full: drop what has fired, and grow it if that frees less than half
    std::copy(front_.begin() + static_cast<std::ptrdiff_t>(front_pos_),
              front_.begin() + static_cast<std::ptrdiff_t>(front_end_), front_.begin());
    ensure_size(front_, room);
  }
  front_data_ = front_.data();
  front_pos_ = 0;
  front_end_ = n;
}


void EventQueue::stage_level0(const Bucket& bucket) {
  // Every entry shares base_block_'s digits above level 0. A stable radix sort on the low 16 bits of
  // the time (the time within a block, then the level-0 digit) lays the bucket out in time order,
  // each level-0 bucket's part contiguous. (16 bits while a block and a digit are 8 bits each; other
  // widths, tried by tests/bench/queue_widths.sh, sum the two histograms in two loops.)
  constexpr bool kSameWidth = kBlockBits == kDigitBits;
  const std::size_t n = bucket.count;
  ensure_size(staged_, n);
  ensure_size(scratch_, n);
  std::array<std::uint32_t, kBlockMask + 1> low{};
  std::array<std::uint32_t, kDigits> digit{};
  for_each_entry<true>(bucket, kChunkEntries, [&](const Entry& e) {
    ++low[e.time & kBlockMask];
    ++digit[(e.time >> kBlockBits) & (kDigits - 1)];
  });
  std::uint32_t sum_low = 0;
  std::uint32_t sum_digit = 0;
  if constexpr (!kSameWidth) {
    for (std::uint32_t& l : low) sum_low += std::exchange(l, sum_low);
  }
  for (unsigned d = 0; d < kDigits; ++d) {
    if constexpr (kSameWidth) {
      const std::uint32_t l = low[d];
      low[d] = sum_low;
      sum_low += l;
    }
    const std::uint32_t c = digit[d];
    digit[d] = sum_digit;
    stage_begin_[d] = sum_digit;
    sum_digit += c;
    stage_end_[d] = sum_digit;
    if (c != 0) {
      occupied_[d / 64] |= std::uint64_t{1} << (d % 64);
      summary_ |= std::uint64_t{1} << (d / 64);
    }
  }
  Entry* const tmp = scratch_.data();
  for_each_entry(bucket, kChunkEntries, [&](const Entry& e) { tmp[low[e.time & kBlockMask]++] = e; });
  Entry* const out = staged_.data();
  for (std::size_t i = 0; i < n; ++i) out[digit[(tmp[i].time >> kBlockBits) & (kDigits - 1)]++] = tmp[i];
  ahead_end_ = n;
  ahead_pos_ = std::min(n, kAhead);
  for (std::size_t i = 0; i < ahead_pos_; ++i) prefetch_generation(out[i].slot);
}

void EventQueue::spread(const Bucket& bucket) {  // base_block_ is its earliest block
  for_each_entry<true>(bucket, kChunkEntries, [&](const Entry& e) {
    const std::uint64_t block = e.time >> kBlockBits;
    append(block == base_block_ ? 0 : bucket_of(block, base_block_), e.time) = e;  // always below it
  });
}

void EventQueue::take_few(Bucket& few) {  // see insert_few and sort_few
  static_assert(kFewMax <= 64, "sort_few: at most 64 entries, 16-bit ranks");
  front_end_ = few.count <= kInsertionSortMax ? insert_few(front_, few)
                                              : sort_few<kBlockBits + kDigitBits>(front_, few);
  front_data_ = front_.data();
  front_pos_ = 0;
  front_last_ = front_[front_end_ - 1].time;
  release_chunks(few);
}

void EventQueue::refill_from_lowest_bucket() {
  const auto w = static_cast<unsigned>(__builtin_ctzll(summary_));
  const auto b = w * 64 + static_cast<unsigned>(__builtin_ctzll(occupied_[w]));
  occupied_[w] &= occupied_[w] - 1;
  if (occupied_[w] == 0) summary_ &= summary_ - 1;
  Bucket& lowest = buckets_[b];
  // One branch, not a chain of three: the bucket's level and count come in no order in a step.
  const bool few = (b >= kDigits) & ((lowest.count == 1) | (is_level1(b) & (lowest.count <= kFewMax)));
  if (few) {
    // A bucket of one, or a few events within 256 blocks (64 ns): the front takes them all, up to
    // the bucket's last block, rather than spreading them one per block. The buckets above stay
    // valid: the new base block agrees with the old on their digits. Read in place, not copied out
    // first: in a step's sparse pattern this is nearly every refill (two events each), so the other
    // cases are a call of their own (their 64-byte-aligned locals would make this one realign the
    // stack and save more registers). A few is up to 64 (kFewMax), not 16: the 1,024-GPU step's
    // spans come in bursts, and half its events were in spans of 17 to 63, spread block by block
    // (each event appended again, about 40 instructions, and each block refilled alone).
    base_block_ = lowest.min_time >> kBlockBits;
    if (lowest.count > 1) base_block_ |= kDigits - 1;
    return take_few(lowest);
  }
  refill_from(b);
}

[[gnu::noinline]] void EventQueue::refill_from(unsigned b) {
  Bucket& lowest = buckets_[b];
  Bucket taken = std::exchange(lowest, Bucket{});
  unsigned digit = b;  // the level-0 bucket that becomes the front
  if (b >= kDigits) {
    base_block_ = taken.min_time >> kBlockBits;
    digit = static_cast<unsigned>(base_block_ & (kDigits - 1));
    if (is_level1(b) && taken.count >= kStageMin) {
      stage_level0(taken);
      // stage_level0 marked the base block's own digit too: the front takes it now.
      occupied_[digit / 64] &= ~(std::uint64_t{1} << (digit % 64));
      if (occupied_[digit / 64] == 0) summary_ &= ~(std::uint64_t{1} << (digit / 64));
      release_chunks(taken);
      taken = Bucket{};
    } else {  // spread over the lower buckets; the base block's entries to bucket 0
      spread(taken);
      release_chunks(taken);
      occupied_[0] &= ~std::uint64_t{1};
      if (occupied_[0] == 0) summary_ &= ~std::uint64_t{1};
      taken = buckets_[0];
      buckets_[0] = Bucket{};
    }
  }
  base_block_ = (base_block_ & ~std::uint64_t{kDigits - 1}) | digit;
  // The block's staged part (sorted, scheduled before the rest), then what its chunks list.
  const std::uint32_t begin = stage_begin_[digit];
  const std::uint32_t end = stage_end_[digit];
  stage_begin_[digit] = stage_end_[digit] = 0;
  if (taken.count == 0) {  // the front reads the staged part in place
    front_data_ = staged_.data() + begin;
    front_pos_ = 0;
    front_end_ = end - begin;
    front_last_ = front_data_[front_end_ - 1].time;
    return;
  }
  if (begin == end && taken.count <= kFewMax) {  // the common case: no staged part
    return take_few(taken);
  }
  const auto by_time = [](const Entry& a, const Entry& b) { return a.time < b.time; };
  if (taken.count <= kInsertionSortMax) {  // a few scheduled since: sort them, merge after ties
    std::array<Entry, kInsertionSortMax> later;
    std::size_t n = 0;
    for_each_entry(taken, kChunkEntries, [&](const Entry& e) { insert_sorted(later.data(), n++, e); });
    release_chunks(taken);
    ensure_size(front_, end - begin + n);
    std::merge(staged_.begin() + begin, staged_.begin() + end, later.begin(), later.begin() + n,
               front_.begin(), by_time);  // std::merge puts the first range's first among equals
    front_data_ = front_.data();
    front_pos_ = 0;
    front_end_ = end - begin + n;
    front_last_ = front_[front_end_ - 1].time;
    return;
  }
  ensure_size(scratch_, end - begin);
  std::copy(staged_.begin() + begin, staged_.begin() + end, scratch_.begin());
  sort_into_front(gather(taken, end - begin));
  release_chunks(taken);
}

}  // namespace hybridsim::sim
