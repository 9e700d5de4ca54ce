#include "sim/event_queue.h"

#include <string>

#include "sim/error.h"

namespace hybridsim::sim {

namespace {
constexpr std::size_t kArity = 4;
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
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  Slot& s = slots_[slot];
  s.handler = &handler;
  s.tag = tag;
  s.cancelled = false;
  push(Entry{at.ps(), next_seq_++, slot});
  ++live_;
  return EventId{slot, s.generation};
}

bool EventQueue::is_pending(EventId id) const {
  if (id.generation == 0 || id.slot >= slots_.size()) return false;
  const Slot& s = slots_[id.slot];
  return s.generation == id.generation && !s.cancelled;
}

bool EventQueue::cancel(EventId id) {
  if (!is_pending(id)) return false;
  slots_[id.slot].cancelled = true;
  --live_;
  return true;
}

void EventQueue::reserve(std::size_t events) {
  heap_.reserve(events);
  slots_.reserve(events);
  free_slots_.reserve(events);
}

void EventQueue::release(std::uint32_t slot) {
  Slot& s = slots_[slot];
  ++s.generation;
  if (s.generation == 0) s.generation = 1;  // 0 is reserved for "no event"
  free_slots_.push_back(slot);
}

void EventQueue::push(const Entry& e) {
  // Sift up with a hole: move parents down until e's place is found.
  std::size_t i = heap_.size();
  heap_.push_back(e);
  Entry* h = heap_.data();
  while (i > 0) {
    const std::size_t parent = (i - 1) / kArity;
    if (!earlier(e, h[parent])) break;
    h[i] = h[parent];
    i = parent;
  }
  h[i] = e;
}

EventQueue::Entry EventQueue::pop_top() {
  Entry* h = heap_.data();
  const Entry top = h[0];
  const Entry last = h[heap_.size() - 1];
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return top;
  // Sift the last entry down from the root with a hole.
  std::size_t i = 0;
  for (;;) {
    const std::size_t first = i * kArity + 1;
    if (first >= n) break;
    std::size_t best = first;
    const std::size_t end = first + kArity < n ? first + kArity : n;
    for (std::size_t c = first + 1; c < end; ++c)
      if (earlier(h[c], h[best])) best = c;
    if (!earlier(h[best], last)) break;
    h[i] = h[best];
    i = best;
  }
  h[i] = last;
  return top;
}

void EventQueue::drop_cancelled_top() {
  while (!heap_.empty() && slots_[heap_[0].slot].cancelled) release(pop_top().slot);
}

Time EventQueue::next_time() {
  drop_cancelled_top();
  return heap_.empty() ? Time::max() : Time::ps(heap_[0].time);
}

bool EventQueue::step() {
  drop_cancelled_top();
  if (heap_.empty()) return false;
  const Entry e = pop_top();
  Slot& s = slots_[e.slot];
  EventHandler* handler = s.handler;
  const std::uint64_t tag = s.tag;
  release(e.slot);  // before the call, so the handler may reuse the slot
  --live_;
  now_ = Time::ps(e.time);
  ++processed_;
  handler->on_event(tag);
  return true;
}

void EventQueue::run() {
  stop_requested_ = false;
  while (!stop_requested_ && step()) {
  }
}

void EventQueue::run_until(Time until) {
  if (until < now_)
    throw InternalError("run_until(" + format_time(until) + ") is before now " + format_time(now_));
  stop_requested_ = false;
  while (!stop_requested_ && next_time() <= until) step();
  if (!stop_requested_) now_ = until;
}

}  // namespace hybridsim::sim
