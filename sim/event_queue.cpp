#include "sim/event_queue.h"

#include <algorithm>
#include <limits>
#include <string>

#include "sim/error.h"

namespace hybridsim::sim {

// How the order is kept. The clock never goes back, so the pending events form a *monotone* priority
// queue, which a radix heap serves in O(1) per schedule and amortized O(log of the time span) per
// event, touching memory sequentially:
//  - Bucket b > 0 holds the entries whose time first differs from base_ in bit b-1; bucket 0 holds
//    those at exactly base_. A schedule appends to one bucket.
//  - When bucket 0 runs out, the lowest non-empty bucket is emptied: base_ becomes its smallest time
//    and each of its entries moves to a lower bucket (those at the new base_ into bucket 0). Buckets
//    above it stay valid, because the new base_ agrees with the old one on their bits.
// Ties: entries of equal time always share a bucket, are appended in scheduling order, and are moved
// in order into buckets that were empty, so bucket 0 lists them in scheduling order. Hence events come
// out by time, then scheduling order — without storing a sequence number.
// Looking ahead (next_time(), or run_until() stopping before the next event) moves base_ past now();
// an event then scheduled before base_ goes to early_, a small binary heap ordered by (time, sequence)
// whose entries all come before any in the buckets.

namespace {


// std::push_heap/pop_heap keep the largest on top; "later" puts the earliest there.
template <class E>
bool later(const E& a, const E& b) {
  return a.time != b.time ? a.time > b.time : a.seq > b.seq;
}

std::uint32_t next_generation(std::uint32_t g) { return g == std::numeric_limits<std::uint32_t>::max() ? 1 : g + 1; }

}  // namespace

int EventQueue::bucket_of(std::uint64_t time, std::uint64_t base) {
  const std::uint64_t x = time ^ base;
  if (x == 0) return 0;
  const int level = (63 - __builtin_clzll(x)) / kDigitBits;
  const int digit = static_cast<int>(time >> (level * kDigitBits)) & (kDigits - 1);
  return level * kDigits + digit;  // never 0: at level 0 the digit is above base_'s
}

EventId EventQueue::schedule_at(Time at, EventHandler& handler, std::uint64_t tag) {
  if (at < now_)
    throw InternalError("event scheduled in the past: at " + format_time(at) + ", now " +
                        format_time(now_));
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
  if (time >= base_) {
    const int b = bucket_of(time, base_);
    buckets_[b].push_back(e);
    occupied_[b >> 6] |= std::uint64_t{1} << (b & 63);
  } else {
    early_.push_back(EarlyEntry{time, early_seq_++, e});
    std::push_heap(early_.begin(), early_.end(), later<EarlyEntry>);
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
}

bool EventQueue::refill() {
  auto& front_bucket = buckets_[0];
  front_bucket.clear();
  front_ = 0;
  occupied_[0] &= ~std::uint64_t{1};
  int i = -1;
  for (int w = 0; w < kWords; ++w) {
    if (occupied_[w] != 0) {
      i = w * 64 + __builtin_ctzll(occupied_[w]);
      occupied_[w] &= occupied_[w] - 1;
      break;
    }
  }
  if (i < 0) return false;
  auto& source = buckets_[i];
  std::uint64_t smallest = source.front().time;
  for (const Entry& e : source) smallest = std::min(smallest, e.time);
  base_ = smallest;
  for (const Entry& e : source) {
    const int b = bucket_of(e.time, base_);  // always < i
    buckets_[b].push_back(e);
    occupied_[b >> 6] |= std::uint64_t{1} << (b & 63);
  }
  source.clear();
  return true;
}

bool EventQueue::next_live() {
  for (;;) {
    if (!early_.empty()) {
      const Entry& e = early_.front().entry;
      if (cancelled_ == 0 || !is_cancelled(e)) return true;
      --cancelled_;
      free_slot(e.slot);
      std::pop_heap(early_.begin(), early_.end(), later<EarlyEntry>);
      early_.pop_back();
      continue;
    }
    if (front_ == buckets_[0].size() && !refill()) return false;
    const Entry& e = buckets_[0][front_];
    if (cancelled_ == 0 || !is_cancelled(e)) return true;
    --cancelled_;
    free_slot(e.slot);
    ++front_;
  }
}

std::uint64_t EventQueue::next_entry_time() const {
  return early_.empty() ? buckets_[0][front_].time : early_.front().time;
}

void EventQueue::fire_next() {
  Entry e;  // a copy: the handler may schedule into the same bucket
  if (early_.empty()) {
    e = buckets_[0][front_++];
  } else {
    e = early_.front().entry;
    std::pop_heap(early_.begin(), early_.end(), later<EarlyEntry>);
    early_.pop_back();
  }
  generations_[e.slot] = next_generation(e.generation);  // its EventId is no longer pending
  free_slot(e.slot);  // before the call, so the handler may reuse the slot
  --live_;
  now_ = Time::ps(static_cast<std::int64_t>(e.time));
  ++processed_;
  e.handler->on_event(e.tag);
}

Time EventQueue::next_time() {
  return next_live() ? Time::ps(static_cast<std::int64_t>(next_entry_time())) : Time::max();
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
  while (!stop_requested_ && next_live() && next_entry_time() <= limit) fire_next();
  if (!stop_requested_) now_ = until;
}

}  // namespace hybridsim::sim
