// sim::EventQueue — the simulation clock and its pending events, processed in a documented total
// order: by time, then by the order they were scheduled.
//   struct Ping : sim::EventHandler { void on_event(std::uint64_t tag) override { ... } } ping;
//   sim::EventQueue q;  q.schedule_after(Time::us(2), ping, /*tag=*/7);  q.run();
//
// Why this shape: handlers are objects that already exist (a link, a stream, a collective) and are
// called through one virtual function with a 64-bit tag that says which of their things happened
// (a message index, a rank). Nothing is allocated per event and there is no std::function: pending
// events are 32-byte entries (time, handler, tag, slot, generation) that carry what they call, so
// firing one reads nothing scattered; a slot is only a generation count, for EventIds. The next
// 256-ps block of time is a sorted array (the front); later events wait in a radix heap over 256-ps
// blocks with 8-bit digits, 11 at level 1 (the clock never goes back, so a monotone queue suffices)
// whose buckets hold their first entry and a list of fixed-size chunks recycled through a free list; a 64-ns
// span of it is radix-sorted as a whole when it comes up. The slots' generation counts make EventIds safe.
// Cancelling bumps the generation, so it is O(1) and safe to repeat; the entry is dropped when it
// comes up. See event_queue.cpp for the order.
#pragma once
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "sim/time.h"

namespace hybridsim::sim {

// What later layers implement to be woken up by the queue.
class EventHandler {
 public:
  virtual void on_event(std::uint64_t tag) = 0;

 protected:
  ~EventHandler() = default;
};

// A handle to a scheduled event. Default-constructed handles refer to nothing.
struct EventId {
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;  // 0 never names a live event
};

// A pending event as pending_events() lists it.
struct PendingEvent {
  Time time;
  EventHandler* handler;
  std::uint64_t tag;
  EventId id;  // cancel(id) removes it (posted: empty, cancel_if); pending_events() leaves it pending
};

class EventQueue {
 public:
  EventQueue() = default;
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  // Schedules handler.on_event(tag) at absolute time `at`. Throws InternalError if at < now().
  // Inline, and its common case (the spare slot free, a time past the front's block, the bucket
  // empty or with room in its tail chunk) calls nothing, so it needs no registers saved; the rest is
  // schedule_slow().
  EventId schedule_at(Time at, EventHandler& handler, std::uint64_t tag = 0) {
    const std::uint32_t slot = spare_slot_;  // most often the slot of the event being handled
    if (slot == kNoSlot) [[unlikely]]
      return schedule_slow(at, handler, tag);
    const std::uint32_t generation = generations_[slot];
    if (!place(at, handler, tag, slot, generation)) [[unlikely]]
      return schedule_slow(at, handler, tag);
    spare_slot_ = kNoSlot;
    return EventId{slot, generation};
  }
  EventId schedule_after(Time delay, EventHandler& handler, std::uint64_t tag = 0) {
    return schedule_at(now_ + delay, handler, tag);
  }
  // The same event, in the same order, without an EventId: cancel() and is_pending() cannot name it,
  // so it takes no slot, and firing it writes no generation count. Most of a step's events are these
  // (hops, arrivals): the fired slot's count was a scattered write, 0.59 D1 misses an event at 1,024
  // GPUs (tests/bench/MEASUREMENTS.md, branch q41). cancel_if() still reaches them.
  void post_at(Time at, EventHandler& handler, std::uint64_t tag = 0) {
    if (!place(at, handler, tag, kPostSlot, kPostGeneration)) [[unlikely]]
      post_slow(at, handler, tag);
  }
  void post_after(Time delay, EventHandler& handler, std::uint64_t tag = 0) {
    post_at(now_ + delay, handler, tag);
  }
  // Returns true if the event was pending and is now cancelled; false (and no effect) otherwise.
  bool cancel(EventId id);
  bool is_pending(EventId id) const;
  // Cancels every live pending event, posted or not, for which pred(PendingEvent) is true, as
  // cancel() would; returns how many. O(pending).
  template <class Pred>
  std::size_t cancel_if(Pred&& pred) {
    std::size_t n = 0;
    const auto cancel_entry = [&](Entry& e) {
      if (is_cancelled(e) || !pred(pending_event(e))) return;
      if (e.slot == kPostSlot) {
        e.generation = 0;  // the post slot's count is never 0: the entry is stale
      } else {
        generations_[e.slot] = next_generation(e.generation);
      }
      ++cancelled_;
      --live_;
      ++n;
    };
    visit_entries(*this, cancel_entry);
    for (LateEntry& l : late_) cancel_entry(l.entry);
    return n;
  }

  // Processes events until none are left (or stop() is called from a handler).
  void run();
  // Processes every event with time <= until, then sets now() to `until`.
  void run_until(Time until);
  // Processes the next live event, if any. Returns false when the queue is empty.
  bool step() {
    if (front_ready()) [[likely]] {
      fire(pop_front());
      return true;
    }
    return step_slow();
  }
  // Makes run()/run_until() return after the event being handled (a loop of step() asks
  // stop_requested(); run() and run_until() clear it as they begin).
  void stop() { stop_requested_ = true; }
  bool stop_requested() const { return stop_requested_; }

  Time now() const { return now_; }
  std::uint64_t events_processed() const { return processed_; }
  std::size_t pending() const { return live_; }
  // Entries copied to make the front its own array or to drop its fired ones (own_front): what a
  // front of many events at one time costs as its handlers schedule more into it.
  std::uint64_t front_entries_moved() const { return front_moved_; }
  // Time of the next live event, or Time::max() when empty.
  Time next_time();
  // Pre-sizes the slot table and the chunk pool for this many pending events (optional).
  void reserve(std::size_t events);

  // Every live pending event, in the order they would fire (time, then the order scheduled).
  // Cancelled events are not listed. O(pending log pending); allocates the result.
  std::vector<PendingEvent> pending_events() const;

 private:
  // A pending event in the queue: 32 bytes, two to a cache line. It carries its handler and tag, so
  // that firing it reads nothing else (its slot's generation count is only written): with them kept
  // in a table by slot instead (16-byte entries), the scattered load of the handler from that table
  // was the profile's largest hot spot in the hold model at 10^5 pending. Its slot is not given to
  // another event until this entry comes up.
  struct Entry {
    std::uint64_t time;  // picoseconds; never negative (the clock starts at zero, never goes back)
    EventHandler* handler;
    std::uint64_t tag;
    std::uint32_t slot;
    std::uint32_t generation;  // the slot's generation when scheduled; stale once cancelled
  };
  static_assert(sizeof(Entry) == 32);
  static constexpr std::uint32_t kChunkEntries = 63;
  // `next` first, so that a chunk holding a few entries (a step's sparse pattern) is one cache line
  // with them: at the end, taking and releasing a chunk touched a second line.
  struct alignas(64) Chunk {
    Chunk* next;
    std::array<std::uint64_t, 3> unused;  // the entries start at a 32-byte boundary
    std::array<Entry, kChunkEntries> entries;
  };
  static_assert(sizeof(Chunk) == 2048);
  // A bucket's entries: its first in the bucket itself, the rest in a list of chunks appended to at
  // the tail. In a step most buckets of the radix heap hold one entry or two (the events are sparse
  // in time, a few per 64 ns): those need no chunk, so nothing is taken from and given back to the
  // pool, and the entry shares the bucket's cache line. A bucket without chunks has a full
  // tail_size, so that its next append past the first takes a chunk from the pool.
  struct alignas(64) Bucket {
    Entry first{};  // valid when count > 0
    Chunk* head = nullptr;
    Chunk* tail = nullptr;
    std::uint32_t tail_size = kChunkEntries;
    std::uint32_t count = 0;
    std::uint64_t min_time = ~std::uint64_t{0};
  };
  static_assert(sizeof(Bucket) == 64);
  // An event scheduled into the front's block before its latest entry: a binary heap by (time,
  // sequence) whose entries come after the front's entries of equal time.
  struct LateEntry {
    std::uint64_t time;
    std::uint64_t seq;
    Entry entry;
  };
  // Time is cut into blocks of 2^kBlockBits ps. The front holds every pending event of block
  // base_block_ (and any earlier one, scheduled after a look-ahead); the radix heap holds the later
  // blocks: bucket (L, d) those whose block number first differs from base_block_ in 8-bit digit L,
  // where their digit is d (> base_block_'s digit there). Ascending bucket index means ascending time.
  // A level-0 bucket d may also have a staged part, staged_[stage_begin_[d], stage_end_[d]), sorted
  // by time, which comes before its chunks (see event_queue.cpp).
  static constexpr unsigned kBlockBits = 8;
  static constexpr std::uint64_t kBlockMask = (std::uint64_t{1} << kBlockBits) - 1;
  static constexpr unsigned kDigitBits = 8;
  static constexpr unsigned kDigits = 1u << kDigitBits;
  // Level 1 is wider than the others: 11 bits of 64-ns spans (131 us), so that an event a few
  // microseconds ahead lands there at once, not in a 16-us level-2 bucket that is spread over level
  // 1 first. With 8 bits, 42.6% of the 1,024-GPU jittered step's events moved twice (level 2, then
  // level 1); with 11, the step took 2.0% fewer instructions and 3.2% fewer D1 misses, the hold model
  // at 10^5 pending 0.4% more instructions (tests/bench/MEASUREMENTS.md, branch perf43). Level 0's
  // 256 blocks stay a 64-ns span (take_few, stage_level0); 12 bits would pass kWords' limit.
  static constexpr unsigned kLevel1Bits = 11;
  static constexpr unsigned kLevel1Buckets = 1u << kLevel1Bits;
  static constexpr unsigned kLevels =
      2 + (63 - kBlockBits - kDigitBits - kLevel1Bits + kDigitBits - 1) / kDigitBits;
  static constexpr unsigned kBuckets = kDigits + kLevel1Buckets + (kLevels - 2) * kDigits;
  static constexpr bool is_level1(unsigned b) { return b >= kDigits && b < kDigits + kLevel1Buckets; }
  // Where a block goes, by the count of leading zeros of block ^ base_block (the highest digit in
  // which they differ): the digit's mask (bits 0-31), the level's first bucket (bits 32-47) and the
  // digit's shift (bits 48-55). One load: with three fields in a struct, bucket_of was 9 instructions
  // longer than the uniform widths' division, 10 an event in the hold model; with this, 3.
  static constexpr std::array<std::uint64_t, 64> kLevelOfClz = [] {
    std::array<std::uint64_t, 64> t{};
    for (unsigned z = 0; z < 64; ++z) {
      const unsigned h = 63 - z;  // the highest bit that differs
      std::uint64_t base = 0, shift = 0, bits = kDigitBits;
      if (h >= kDigitBits && h < kDigitBits + kLevel1Bits) {
        base = kDigits;
        shift = kDigitBits;
        bits = kLevel1Bits;
      } else if (h >= kDigitBits + kLevel1Bits) {
        const unsigned above = (h - kDigitBits - kLevel1Bits) / kDigitBits;  // levels above 1, less 1
        base = kDigits + kLevel1Buckets + above * kDigits;
        shift = kDigitBits + kLevel1Bits + above * kDigitBits;
      }
      t[z] = ((std::uint64_t{1} << bits) - 1) | (base << 32) | (shift << 48);
    }
    return t;
  }();
  static constexpr unsigned kWords = (kBuckets + 63) / 64;
  static_assert(kWords <= 64, "one summary word indexes the occupancy words");
  // A block with at most this many events is sorted by insertion, a larger one by counting sort.
  static constexpr std::uint32_t kInsertionSortMax = 16;
  // The most a bucket holds in its first entry and first chunk: a level-1 bucket (a 64-ns span) of
  // up to this many events goes to the front whole, by insertion up to kInsertionSortMax (two or
  // three by their ranks, without a branch on their times), above by a ranking of 16-bit keys (see
  // take_few).
  static constexpr std::uint32_t kFewMax = 1 + kChunkEntries;

  static unsigned bucket_of(std::uint64_t block, std::uint64_t base_block) {
    // x is never 0 (the front holds base_block), and the bucket never 0: at level 0 the digit is
    // above base_block's.
    const std::uint64_t x = block ^ base_block;
    const std::uint64_t l = kLevelOfClz[static_cast<unsigned>(__builtin_clzll(x))];
    const auto digit = static_cast<unsigned>(block >> (l >> 48)) & static_cast<unsigned>(l);
    return static_cast<std::uint16_t>(l >> 32) + digit;
  }
  // Appends an entry of this time to buckets_[b] and returns it, for the caller to fill in.
  Entry& append(unsigned b, std::uint64_t time) {
    Bucket& bucket = buckets_[b];
    if (time < bucket.min_time) bucket.min_time = time;
    if (bucket.count++ == 0) {
      mark_occupied(b);
      return bucket.first;
    }
    if (bucket.tail_size == kChunkEntries) [[unlikely]] add_chunk(bucket);
    return bucket.tail->entries[bucket.tail_size++];
  }
  void mark_occupied(unsigned b) {
    occupied_[b / 64] |= std::uint64_t{1} << (b % 64);
    summary_ |= std::uint64_t{1} << (b / 64);
  }
  // schedule_at's and post_at's common case: an entry past the front's block into a bucket that is
  // empty or has room in its tail chunk. False (and nothing done) otherwise.
  bool place(Time at, EventHandler& handler, std::uint64_t tag, std::uint32_t slot,
             std::uint32_t generation) {
    const auto time = static_cast<std::uint64_t>(at.ps());
    const std::uint64_t block = time >> kBlockBits;
    if (block <= base_block_ || at < now_) [[unlikely]]
      return false;
    const unsigned b = bucket_of(block, base_block_);
    Bucket& bucket = buckets_[b];
    Entry* to = &bucket.first;
    if (bucket.count == 0) {
      mark_occupied(b);
    } else {
      if (bucket.tail_size == kChunkEntries) [[unlikely]] {
        // A bucket's second entry takes its first chunk here: in the 1,024-GPU step that was
        // most of post_slow's calls (tests/bench/MEASUREMENTS.md, branch perf44). A full chunk
        // (a 65th entry) or an empty pool still goes the slow way.
        Chunk* const c = free_chunks_;
        if (bucket.tail != nullptr || c == nullptr) return false;
        free_chunks_ = c->next;
        c->next = nullptr;
        bucket.head = bucket.tail = c;
        bucket.tail_size = 0;
      }
      to = &bucket.tail->entries[bucket.tail_size++];
    }
    ++bucket.count;
    if (time < bucket.min_time) bucket.min_time = time;
    // Field by field into the bucket: an Entry built first would be built on the stack and copied
    // with wider loads than its stores, which stalls.
    Entry& e = *to;
    e.time = time;
    e.handler = &handler;
    e.tag = tag;
    e.slot = slot;
    e.generation = generation;
    ++live_;
    return true;
  }
  void add_chunk(Bucket& bucket);  // gives the bucket (holding an entry) an empty tail chunk
  EventId schedule_slow(Time at, EventHandler& handler, std::uint64_t tag);  // any case
  void post_slow(Time at, EventHandler& handler, std::uint64_t tag);         // any case
  void insert(const Entry& e);                                               // any entry at or after now()
  [[noreturn]] static void throw_past(Time at, Time now);
  std::uint32_t new_slot();                 // a slot never used before; no other is free
  void schedule_into_front(const Entry& e); // an entry of the front's block (or earlier)
  void push_front(const Entry& e) {
    if (front_data_ != front_.data() || front_end_ == front_.size()) [[unlikely]] own_front();
    front_[front_end_++] = e;
  }
  void own_front();  // makes the front its own array (not a staged part), with room for as many again
  void grow_pool(std::size_t chunks);
  // Gives the bucket's chunks back to the pool and empties it. Inline: most buckets in a step have
  // none, and the call with its 64-byte reset was 13 instructions a refill. Its first entry is left
  // as it is (not valid once the count is 0).
  void release_chunks(Bucket& bucket) {
    if (bucket.head != nullptr) [[unlikely]] {
      bucket.tail->next = free_chunks_;
      free_chunks_ = bucket.head;
      bucket.head = bucket.tail = nullptr;
    }
    bucket.tail_size = kChunkEntries;
    bucket.count = 0;
    bucket.min_time = ~std::uint64_t{0};
  }
  void refill_from_lowest_bucket();
  void refill_from(unsigned b);  // the lowest bucket b, in the cases other than a few events
  void take_few(Bucket& few);    // the bucket's few (<= kFewMax) events into the front, sorted
  void stage_level0(const Bucket& bucket);
  void spread(const Bucket& bucket);
  std::size_t gather(const Bucket& bucket, std::size_t at);
  void sort_into_front(std::size_t n);  // scratch_'s first n entries, all of base_block_
  bool refill();
  bool next_live();                   // drops cancelled entries; true when an event is pending
  const Entry& next_entry() const;    // valid after next_live() returned true
  void fire_next();
  bool step_slow();
  // True when the next event is the front's next entry, and live.
  bool front_ready() const {
    return front_pos_ < front_end_ && late_.empty() &&
           (cancelled_ == 0 || !is_cancelled(front_data_[front_pos_]));
  }
  Entry pop_front() {
    const Entry e = front_data_[front_pos_++];  // a copy: the handler may schedule into the front
    // The coming events' generation counts are scattered: fetch one of the staged events' kAhead on.
    if (ahead_pos_ < ahead_end_) prefetch_generation(staged_[ahead_pos_++].slot);
    return e;
  }
  static std::uint32_t next_generation(std::uint32_t g) {
    return g == ~std::uint32_t{0} ? 1 : g + 1;  // 0 never names an event
  }
  void fire(const Entry& e) {
    if (e.slot != kPostSlot) {
      generations_[e.slot] = next_generation(e.generation);  // its EventId is no longer pending
      // Free before the call, so that the handler may reuse the slot: as the spare, which saves the
      // free list a push and a pop when the handler schedules one event (the commonest case).
      if (spare_slot_ != kNoSlot) [[unlikely]]
        free_slots_.push_back(spare_slot_);
      spare_slot_ = e.slot;
    }
    --live_;
    now_ = Time::ps(static_cast<std::int64_t>(e.time));
    ++processed_;
    e.handler->on_event(e.tag);
  }
  bool is_cancelled(const Entry& e) const { return generations_[e.slot] != e.generation; }
  void prefetch_generation(std::uint32_t slot) const { __builtin_prefetch(&generations_[slot], 1); }
  PendingEvent pending_event(const Entry& e) const {
    const EventId id = e.slot == kPostSlot ? EventId{} : EventId{e.slot, e.generation};
    return PendingEvent{Time::ps(static_cast<std::int64_t>(e.time)), e.handler, e.tag, id};
  }
  // Calls f on every pending entry but late_'s, cancelled ones too: the front's, then the staged
  // parts', then the buckets' in list order. Self is EventQueue or const EventQueue.
  template <class Self, class F>
  static void visit_entries(Self& q, F&& f) {
    using E = std::conditional_t<std::is_const_v<Self>, const Entry, Entry>;
    // front_data_ points into front_ or staged_, both this queue's own (non-const) arrays.
    E* front = const_cast<E*>(q.front_data_);
    for (std::size_t i = q.front_pos_; i < q.front_end_; ++i) f(front[i]);
    for (unsigned d = 0; d < kDigits; ++d)
      for (std::uint32_t i = q.stage_begin_[d]; i < q.stage_end_[d]; ++i) f(q.staged_[i]);
    for (auto& bucket : q.buckets_) {
      if (bucket.count != 0) f(bucket.first);
      for (auto* c = bucket.head; c != nullptr; c = c->next) {
        const std::uint32_t n = c == bucket.tail ? bucket.tail_size : kChunkEntries;
        for (std::uint32_t k = 0; k < n; ++k) f(c->entries[k]);
      }
    }
  }

  // [front_pos_, front_end_) of front_data_: block base_block_'s events, sorted. front_data_ is
  // front_'s array, or a block's staged part in staged_ read in place (until something is scheduled
  // into the front: then it is copied into front_).
  const Entry* front_data_ = nullptr;
  std::vector<Entry> front_;
  std::size_t front_pos_ = 0;
  std::size_t front_end_ = 0;
  std::uint64_t front_last_ = 0;  // time of the front's latest entry; earlier ones go to late_
  std::uint64_t front_moved_ = 0;  // front_entries_moved()
  std::vector<LateEntry> late_;
  std::uint64_t late_seq_ = 0;
  bool next_is_late_ = false;     // set by next_live(): the next event is late_'s top
  std::uint64_t base_block_ = 0;
  std::array<Bucket, kBuckets> buckets_{};
  std::vector<Entry> staged_;   // a spread level-1 bucket, sorted by time
  std::vector<Entry> scratch_;  // the radix sort's first pass; a block's entries before sorting
  std::array<std::uint32_t, kDigits> stage_begin_{};
  std::array<std::uint32_t, kDigits> stage_end_{};
  std::size_t ahead_pos_ = 0;  // [ahead_pos_, ahead_end_): staged events whose generation counts
  std::size_t ahead_end_ = 0;  // are not yet prefetched; pop_front() prefetches one, kAhead ahead
  static constexpr std::size_t kAhead = 16;
  std::array<std::uint64_t, kWords> occupied_{};  // bit b: buckets_[b] has a chunk
  std::uint64_t summary_ = 0;                     // bit w: occupied_[w] != 0
  Chunk* free_chunks_ = nullptr;
  std::vector<std::unique_ptr<Chunk[]>> chunk_blocks_;  // owns every chunk
  // Slot 0 is the posted events': its count stays kPostGeneration; a cancelled posted entry's own
  // count is set to 0.
  static constexpr std::uint32_t kPostSlot = 0;
  static constexpr std::uint32_t kPostGeneration = 1;
  // Per slot; bumped when its event fires or is cancelled.
  std::vector<std::uint32_t> generations_ = std::vector<std::uint32_t>(1, kPostGeneration);
  std::vector<std::uint32_t> free_slots_;
  static constexpr std::uint32_t kNoSlot = ~std::uint32_t{0};  // never a slot (at most 2^32 - 2)
  std::uint32_t spare_slot_ = kNoSlot;  // a free slot kept out of free_slots_, taken first
  std::size_t cancelled_ = 0;  // cancelled entries not yet dropped (0: skip the generation check)
  // live_ and processed_ are not neighbours: fire() updates both, and as a pair the compiler updated
  // them with one 16-byte load, which cannot be forwarded schedule_at()'s 8-byte store to live_.
  std::size_t live_ = 0;
  Time now_ = Time::zero();
  std::uint64_t processed_ = 0;
  bool stop_requested_ = false;
};

}  // namespace hybridsim::sim
