// sim::EventQueue — the simulation clock and its pending events, processed in a documented total
// order: by time, then by the order they were scheduled.
//   struct Ping : sim::EventHandler { void on_event(std::uint64_t tag) override { ... } } ping;
//   sim::EventQueue q;  q.schedule_after(Time::us(2), ping, /*tag=*/7);  q.run();
//
// Why this shape: handlers are objects that already exist (a link, a stream, a collective) and are
// called through one virtual function with a 64-bit tag that says which of their things happened
// (a message index, a rank). Nothing is allocated per event and there is no std::function: pending
// events are 32-byte entries in a radix heap (vectors that keep their capacity), and a slab of
// generation counts (recycled through a free list) makes EventIds safe. Cancelling bumps the
// generation, so it is O(1) and safe to repeat; the entry is dropped when it comes up.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
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

class EventQueue {
 public:
  EventQueue() = default;
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  // Schedules handler.on_event(tag) at absolute time `at`. Throws InternalError if at < now().
  EventId schedule_at(Time at, EventHandler& handler, std::uint64_t tag = 0);
  EventId schedule_after(Time delay, EventHandler& handler, std::uint64_t tag = 0) {
    return schedule_at(now_ + delay, handler, tag);
  }
  // Returns true if the event was pending and is now cancelled; false (and no effect) otherwise.
  bool cancel(EventId id);
  bool is_pending(EventId id) const;

  // Processes events until none are left (or stop() is called from a handler).
  void run();
  // Processes every event with time <= until, then sets now() to `until`.
  void run_until(Time until);
  // Processes the next live event, if any. Returns false when the queue is empty.
  bool step();
  // Makes run()/run_until() return after the event being handled.
  void stop() { stop_requested_ = true; }

  Time now() const { return now_; }
  std::uint64_t events_processed() const { return processed_; }
  std::size_t pending() const { return live_; }
  // Time of the next live event, or Time::max() when empty.
  Time next_time();
  // Pre-sizes the slot table and the most used buckets (optional; they grow as needed).
  void reserve(std::size_t events);

 private:
  struct Entry {
    std::uint64_t time;  // picoseconds; never negative (the clock starts at zero, never goes back)
    EventHandler* handler;
    std::uint64_t tag;
    std::uint32_t slot;
    std::uint32_t generation;  // the slot's generation when scheduled; differs once cancelled
  };
  // Entries scheduled earlier than base_ (possible only after next_time() or run_until() looked
  // ahead): a small binary heap ordered by (time, sequence).
  struct EarlyEntry {
    std::uint64_t time;
    std::uint64_t seq;
    Entry entry;
  };
  // Radix-heap buckets, by the highest 4-bit digit in which an entry's time differs from base_ and
  // the entry's value of that digit; ascending bucket index means ascending time. Bucket 0 holds the
  // entries at exactly base_, oldest first, consumed from front_.
  static constexpr int kDigitBits = 4;
  static constexpr int kDigits = 1 << kDigitBits;
  static constexpr int kLevels = (63 + kDigitBits - 1) / kDigitBits;  // times have 63 bits
  static constexpr int kBuckets = kLevels * kDigits;
  static constexpr int kWords = (kBuckets + 63) / 64;

  static int bucket_of(std::uint64_t time, std::uint64_t base);
  bool next_live();  // drops cancelled entries; true when an event is pending
  std::uint64_t next_entry_time() const;  // after next_live() returned true
  void fire_next();
  bool refill();
  bool is_cancelled(const Entry& e) const { return generations_[e.slot] != e.generation; }
  void free_slot(std::uint32_t slot) { free_slots_.push_back(slot); }

  std::array<std::vector<Entry>, kBuckets> buckets_;
  std::size_t front_ = 0;           // next entry of bucket 0
  std::uint64_t base_ = 0;          // every entry in buckets_ has time >= base_
  std::array<std::uint64_t, kWords> occupied_{};  // bit b set when buckets_[b] (b > 0) is non-empty
  std::vector<EarlyEntry> early_;   // heap; its entries all come before those in buckets_
  std::uint64_t early_seq_ = 0;
  std::vector<std::uint32_t> generations_;  // per slot; bumped when its event fires or is cancelled
  std::vector<std::uint32_t> free_slots_;
  std::size_t cancelled_ = 0;  // cancelled entries not yet dropped (0: skip the generation check)
  Time now_ = Time::zero();
  std::uint64_t processed_ = 0;
  std::size_t live_ = 0;
  bool stop_requested_ = false;
};

}  // namespace hybridsim::sim
