#include "sim/event_queue.h"

#include <algorithm>
#include <limits>
#include <string>

#include "sim/error.h"

namespace hybridsim::sim {

// How the order is kept. The clock never goes back, so the pending events form a *monotone* priority
// queue, which a radix heap serves with O(1) work per schedule and, per event, a few moves of a
// 32-byte entry from one bucket to a lower one — sequential memory traffic, no comparisons of keys.
//  - Every entry in the buckets is at or after base_. Bucket (L, d) holds the entries whose time
//    first differs from base_ in 6-bit digit L, where their digit is d (> base_'s digit there);
//    bucket 0 those at exactly base_. A schedule appends to one bucket.
//  - When bucket 0 runs out, the lowest non-empty bucket is emptied: base_ becomes its smallest time
//    (tracked per bucket) and each of its entries moves to a lower bucket, those at the new base_
//    into bucket 0. The buckets below it were empty; those above stay valid, because the new base_
//    agrees with the old one on their digits.
// Ties: entries of equal time always share a bucket, are appended in scheduling order, and are moved
// in order into buckets that were empty, so bucket 0 lists them in scheduling order. Hence events come
// out by time, then scheduling order — without storing a sequence number.
// Looking ahead (next_time(), or run_until() stopping before the next event) moves base_ past now();
// an event then scheduled before base_ goes to early_, a binary heap by (time, sequence), whose
// entries all come before any in the buckets (base_ does not move while it holds any).

namespace {

struct Later {  // std::push_heap/pop_heap keep the largest on top; this puts the earliest there
  template <class E>
  bool operator()(const E& a, const E& b) const {
    return a.time != b.time ? a.time > b.time : a.seq > b.seq;
  }
};

std::uint32_t next_generation(std::uint32_t g) {
  return g == std::numeric_limits<std::uint32_t>::max() ? 1 : g + 1;  // 0 never names an event
}

[[noreturn]] void throw_past(Time at, Time now) {
  throw InternalError("event scheduled in the past: at " + format_time(at) + ", now " +
                      format_time(now));
}

}  // namespace

void EventQueue::grow_pool(std::size_t chunks) {
  // A block of at least `chunks` chunks, and about half as many as exist already (at least 64).
  const std::size_t n = std::max({chunks, std::size_t{64}, chunk_blocks_.size() * 32});
  chunk_blocks_.emplace_back(new Chunk[n]);
  Chunk* block = chunk_blocks_.back().get();
  for (std::size_t i = 0; i + 1 < n; ++i) block[i].next = &block[i + 1];
  block[n - 1].next = free_chunks_;
  free_chunks_ = block;
}

void EventQueue::release_chunks(Bucket& bucket) {
  if (bucket.head != nullptr) {
    bucket.tail->next = free_chunks_;
    free_chunks_ = bucket.head;
  }
  bucket = Bucket{};
}

EventId EventQueue::schedule_at(Time at, EventHandler& handler, std::uint64_t tag) {
  if (at < now_) [[unlikely]] throw_past(at, now_);
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    if (generations_.size() >= std::numeric_limits<std::uint32_t>::max())
      throw InternalError("more than 2^32 - 1 pending events");
    slot = static_cast<std::uint32_t>(generations_.size());
    generations_.push_back(1);
  }
  const std::uint32_t generation = generations_[slot];
  const auto time = static_cast<std::uint64_t>(at.ps());
  const Entry e{time, &handler, tag, slot, generation};
  if (time >= base_) [[likely]] {
    append(buckets_[bucket_of(time, base_)], e);
  } else {
    early_.push_back(EarlyEntry{time, early_seq_++, e});
    std::push_heap(early_.begin(), early_.end(), Later{});
  }
  ++live_;
  return EventId{slot, generation};
}

bool EventQueue::is_pending(EventId id) const {
  return id.generation != 0 && id.slot < generations_.size() &&
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

bool EventQueue::refill() {
  release_chunks(buckets_[0]);
  front_ = 0;
  occupied_[0] &= ~std::uint64_t{1};
  unsigned i = 0;
  for (unsigned w = 0; w < kWords && i == 0; ++w) {
    if (occupied_[w] != 0) {
      i = w * 64 + static_cast<unsigned>(__builtin_ctzll(occupied_[w]));
      occupied_[w] &= occupied_[w] - 1;
    }
  }
  if (i == 0) return false;
  Bucket source = buckets_[i];
  buckets_[i] = Bucket{};
  base_ = source.min_time;
  for (const Chunk* c = source.head; c != nullptr; c = c->next) {
    const std::uint32_t n = c == source.tail ? source.tail_size : kChunkEntries;
    for (std::uint32_t k = 0; k < n; ++k) {
      const Entry& e = c->entries[k];
      append(buckets_[bucket_of(e.time, base_)], e);  // always a bucket below i
    }
  }
  release_chunks(source);
  return true;
}

bool EventQueue::next_live() {
  for (;;) {
    if (!early_.empty()) {
      const Entry& e = early_.front().entry;
      if (cancelled_ == 0 || !is_cancelled(e)) return true;
      --cancelled_;
      free_slots_.push_back(e.slot);
      std::pop_heap(early_.begin(), early_.end(), Later{});
      early_.pop_back();
      continue;
    }
    if (front_empty() && !refill()) return false;
    Bucket& front = buckets_[0];
    if (front_ == kChunkEntries) {  // the head chunk is used up and another follows
      Chunk* done = front.head;
      front.head = done->next;
      done->next = free_chunks_;
      free_chunks_ = done;
      front_ = 0;
    }
    const Entry& e = front.head->entries[front_];
    if (cancelled_ == 0 || !is_cancelled(e)) return true;
    --cancelled_;  // a cancelled event came up: drop it and free its slot
    free_slots_.push_back(e.slot);
    ++front_;
  }
}

const EventQueue::Entry& EventQueue::next_entry() const {
  return early_.empty() ? buckets_[0].head->entries[front_] : early_.front().entry;
}

void EventQueue::fire_next() {
  Entry e;  // a copy: the handler may schedule into the same bucket
  if (early_.empty()) {
    e = buckets_[0].head->entries[front_++];
  } else {
    e = early_.front().entry;
    std::pop_heap(early_.begin(), early_.end(), Later{});
    early_.pop_back();
  }
  generations_[e.slot] = next_generation(e.generation);  // its EventId is no longer pending
  free_slots_.push_back(e.slot);  // before the call, so the handler may reuse the slot
  --live_;
  now_ = Time::ps(static_cast<std::int64_t>(e.time));
  ++processed_;
  e.handler->on_event(e.tag);
}

Time EventQueue::next_time() {
  return next_live() ? Time::ps(static_cast<std::int64_t>(next_entry().time)) : Time::max();
}

bool EventQueue::step() {
  if (!next_live()) return false;
  fire_next();
  return true;
}

void EventQueue::run() {
  stop_requested_ = false;
  while (!stop_requested_ && next_live()) fire_next();
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
