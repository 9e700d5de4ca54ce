#include "sim/event_queue.h"

#include <algorithm>
#include <limits>
#include <string>

#include "sim/error.h"

namespace hybridsim::sim {

// How the order is kept. Time is cut into 256-ps blocks. The events of the current block
// (base_block_) are in the front, a sorted array; every later event is in a radix heap over block
// numbers. The clock never goes back, so the pending events form a *monotone* priority queue.
//  - Radix heap: bucket (L, d) holds the entries whose block first differs from base_block_ in
//    digit L (8 bits; 11 at level 1), where their digit is d (> base_block_'s digit there). A
//    schedule appends to one bucket: O(1), no comparison of keys.
//  - When the front runs out, the lowest non-empty bucket is taken out and base_block_ becomes the
//    block of its earliest entry (tracked per bucket). A level-0 bucket is one block: it becomes the
//    front. A level-1 bucket (a 64-ns span) is staged: a stable radix sort on the low 16 bits of the
//    time (two counting passes: the time within the block, then the level-0 digit) lays it out in
//    staged_ in time order, each block's part contiguous and recorded as the staged part of its
//    level-0 bucket, which comes before whatever is appended to that bucket later (scheduled later).
//    A staged part with nothing appended after it becomes the front in place, without a copy.
//    A higher bucket is spread over lower buckets (those of the new base block into a staging list).
//    The lower buckets stay valid, as do the buckets above: the new base agrees with the old on
//    their digits. An event at 1 us moves once or twice before it reaches the front. A level-1
//    bucket of up to 64 entries (its first and one chunk's), or a bucket of one, becomes the front
//    as it is (base_block_ its last block, or the entry's), which keeps the buckets above valid for
//    the same reason.
//  - The front is sorted by time with a stable sort: a staged part is already sorted and is merged
//    with the few entries appended to its bucket since (sorted by insertion), ahead of them among
//    equal times; otherwise ranks counted without a branch for two or three entries, insertion
//    for up to 16, ranks by the time's low 16 bits (ties by the entry's place in its bucket) for
//    up to 64, counting sort on the 8 low bits for more.
//  - An event scheduled into the front's block at or after the front's latest entry is appended to
//    it; an earlier one (a short delay, or after a look-ahead moved base_block_ past now()) goes to
//    late_, a binary heap by (time, sequence). Every late entry was scheduled after every front entry
//    of equal time (the front's latest time only grows while it lives), so the front wins ties.
// Ties: entries of equal time always share a bucket, are appended in scheduling order, and are moved
// in order into buckets that were empty (or stably into a staged part, which only entries scheduled
// later follow), so each bucket lists them in scheduling order. Hence events
// come out by time, then scheduling order, without storing a sequence number for most of them.

namespace {

struct Later {  // std::push_heap/pop_heap keep the largest on top; this puts the earliest there
  template <class E>
  bool operator()(const E& a, const E& b) const {
    return a.time != b.time ? a.time > b.time : a.seq > b.seq;
  }
};

}  // namespace

void EventQueue::throw_past(Time at, Time now) {
  throw InternalError("event scheduled in the past: at " + format_time(at) + ", now " +
                      format_time(now));
}

void EventQueue::add_chunk(Bucket& bucket) {
  if (free_chunks_ == nullptr) [[unlikely]] grow_pool(0);
  Chunk* c = free_chunks_;
  free_chunks_ = c->next;
  c->next = nullptr;
  if (bucket.tail != nullptr) {
    bucket.tail->next = c;
  } else {  // the bucket's first chunk (it is marked occupied since its first entry)
    bucket.head = c;
  }
  bucket.tail = c;
  bucket.tail_size = 0;
}

void EventQueue::grow_pool(std::size_t chunks) {
  // A block of at least `chunks` chunks, and more the more blocks exist (at least 32 chunks, 64 KiB:
  // a short-lived queue's first block stays under malloc's usual 128-KiB threshold for a fresh mmap,
  // whose page faults would cost the many small queues of folded collectives more than they run).
  const std::size_t n = std::max({chunks, std::size_t{32}, chunk_blocks_.size() * 16});
  chunk_blocks_.emplace_back(new Chunk[n]);
  Chunk* block = chunk_blocks_.back().get();
  for (std::size_t i = 0; i + 1 < n; ++i) block[i].next = &block[i + 1];
  block[n - 1].next = free_chunks_;
  free_chunks_ = block;
}

std::uint32_t EventQueue::new_slot() {
  if (generations_.size() >= std::numeric_limits<std::uint32_t>::max())
    throw InternalError("more than 2^32 - 1 pending events");
  generations_.push_back(1);
  return static_cast<std::uint32_t>(generations_.size() - 1);
}

EventId EventQueue::schedule_slow(Time at, EventHandler& handler, std::uint64_t tag) {
  if (at < now_) [[unlikely]] throw_past(at, now_);
  std::uint32_t slot = spare_slot_;
  if (slot != kNoSlot) {
    spare_slot_ = kNoSlot;
  } else if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = new_slot();
  }
  const std::uint32_t generation = generations_[slot];
  insert(Entry{static_cast<std::uint64_t>(at.ps()), &handler, tag, slot, generation});
  return EventId{slot, generation};
}

void EventQueue::post_slow(Time at, EventHandler& handler, std::uint64_t tag) {
  if (at < now_) [[unlikely]]
    throw_past(at, now_);
  insert(Entry{static_cast<std::uint64_t>(at.ps()), &handler, tag, kPostSlot, kPostGeneration});
}

void EventQueue::insert(const Entry& e) {
  const std::uint64_t block = e.time >> kBlockBits;
  if (block > base_block_) {
    append(bucket_of(block, base_block_), e.time) = e;
  } else {
    schedule_into_front(e);
  }
  ++live_;
}

void EventQueue::schedule_into_front(const Entry& e) {
  if (e.time >= front_last_) {
    push_front(e);
    front_last_ = e.time;
  } else {
    late_.push_back(LateEntry{e.time, late_seq_++, e});
    std::push_heap(late_.begin(), late_.end(), Later{});
  }
}

bool EventQueue::is_pending(EventId id) const {
  return id.generation != 0 && id.slot != kPostSlot && id.slot < generations_.size() &&
         generations_[id.slot] == id.generation;
}

bool EventQueue::cancel(EventId id) {
  if (!is_pending(id)) return false;
  // The entry stays where it is until it comes up; its slot is freed then, not now.
  generations_[id.slot] = next_generation(id.generation);
  ++cancelled_;
  --live_;
  return true;
}

void EventQueue::reserve(std::size_t events) {
  generations_.reserve(events);
  free_slots_.reserve(events);
  std::size_t spare = 0;
  for (const Chunk* c = free_chunks_; c != nullptr && spare < events; c = c->next) spare += kChunkEntries;
  if (spare < events) grow_pool((events - spare) / kChunkEntries + kBuckets);
}

std::vector<PendingEvent> EventQueue::pending_events() const {
  // Events of equal time are either all in one bucket, listed in scheduling order, or in the front
  // and late_, the front's first (see the comment at the top). So: the front, then late_ by (time,
  // sequence), then the buckets in list order, and a stable sort by time gives the fire order.
  std::vector<PendingEvent> out;
  out.reserve(live_);
  const auto add = [&](const Entry& e) {
    if (!is_cancelled(e)) out.push_back(pending_event(e));
  };
  // late_'s entries are in the front's block, the staged parts' and the buckets' in later blocks:
  // listed after the rest, late_ by sequence still follows the front among its equal times.
  visit_entries(*this, add);  // a level-0 bucket's staged part before its chunks
  std::vector<LateEntry> late = late_;
  std::sort(late.begin(), late.end(), [](const LateEntry& a, const LateEntry& b) { return Later{}(b, a); });
  for (const LateEntry& l : late) add(l.entry);
  std::stable_sort(out.begin(), out.end(),
                   [](const PendingEvent& a, const PendingEvent& b) { return a.time < b.time; });
  return out;
}

bool EventQueue::refill() {  // the front and late_ are used up
  if (summary_ == 0) return false;
  refill_from_lowest_bucket();
  return true;
}

bool EventQueue::next_live() {
  for (;;) {
    const bool front_has = front_pos_ < front_end_;
    if (late_.empty()) [[likely]] {
      if (!front_has && !refill()) return false;
      next_is_late_ = false;
    } else {
      next_is_late_ = !front_has || late_.front().time < front_data_[front_pos_].time;
    }
    const Entry& e = next_entry();
    if (cancelled_ == 0 || !is_cancelled(e)) return true;
    --cancelled_;  // a cancelled event came up: drop it and free its slot
    if (e.slot != kPostSlot) free_slots_.push_back(e.slot);
    if (next_is_late_) {
      std::pop_heap(late_.begin(), late_.end(), Later{});
      late_.pop_back();
    } else {
      ++front_pos_;
    }
  }
}

const EventQueue::Entry& EventQueue::next_entry() const {
  return next_is_late_ ? late_.front().entry : front_data_[front_pos_];
}

void EventQueue::fire_next() {
  if (!next_is_late_) [[likely]] {
    fire(pop_front());
    return;
  }
  const Entry e = late_.front().entry;
  std::pop_heap(late_.begin(), late_.end(), Later{});
  late_.pop_back();
  fire(e);
}

Time EventQueue::next_time() {
  return next_live() ? Time::ps(static_cast<std::int64_t>(next_entry().time)) : Time::max();
}

bool EventQueue::step_slow() {
  if (!next_live()) return false;
  fire_next();
  return true;
}

void EventQueue::run() {
  stop_requested_ = false;
  while (!stop_requested_) {
    if (front_ready()) [[likely]] {
      fire(pop_front());
    } else if (front_pos_ == front_end_ && late_.empty() && cancelled_ == 0 && summary_ != 0) {
      // The front used up and nothing to drop: refilled, it holds a live event, which the next turn
      // fires. In a step (about two events a refill) the way through next_live() and fire_next()
      // cost as much again as this.
      refill_from_lowest_bucket();
    } else {
      if (!next_live()) break;
      fire_next();
    }
  }
}

void EventQueue::run_until(Time until) {
  if (until < now_)
    throw InternalError("run_until(" + format_time(until) + ") is before now " + format_time(now_));
  stop_requested_ = false;
  const auto limit = static_cast<std::uint64_t>(until.ps());
  while (!stop_requested_ && next_live() && next_entry().time <= limit) fire_next();
  if (!stop_requested_) now_ = until;
}

}  // namespace hybridsim::sim
