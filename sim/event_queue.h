// sim::EventQueue — the simulation clock and its pending events, processed in a documented total
// order: by time, then by the order they were scheduled (a 64-bit sequence number).
//   struct Ping : sim::EventHandler { void on_event(std::uint64_t tag) override { ... } } ping;
//   sim::EventQueue q;  q.schedule_after(Time::us(2), ping, /*tag=*/7);  q.run();
//
// Why this shape: handlers are objects that already exist (a link, a stream, a collective) and are
// called through one virtual function with a 64-bit tag that says which of their things happened
// (a message index, a rank). Nothing is allocated per event: a 4-ary heap of small plain entries in a
// vector, and a slab of slots (recycled through a free list) that holds the handler, the tag and a
// generation count. Cancelling marks the slot, so it is O(1) and safe to repeat; the entry is dropped
// when it reaches the top. No std::function anywhere.
#pragma once
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
  // Pre-sizes the heap and slot table (optional; they grow as needed).
  void reserve(std::size_t events);

 private:
  struct Entry {
    std::int64_t time;
    std::uint64_t seq;
    std::uint32_t slot;
  };
  struct Slot {
    EventHandler* handler = nullptr;
    std::uint64_t tag = 0;
    std::uint32_t generation = 1;
    bool cancelled = false;
  };
  static bool earlier(const Entry& a, const Entry& b) {
    return a.time < b.time || (a.time == b.time && a.seq < b.seq);
  }
  void push(const Entry& e);
  Entry pop_top();
  void drop_cancelled_top();
  void release(std::uint32_t slot);

  std::vector<Entry> heap_;
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_slots_;
  Time now_ = Time::zero();
  std::uint64_t next_seq_ = 0;
  std::uint64_t processed_ = 0;
  std::size_t live_ = 0;
  bool stop_requested_ = false;
};

}  // namespace hybridsim::sim
