#include "sim/ring_collective.h"

#include <algorithm>
#include <functional>
#include <string>

#include "sim/error.h"

namespace hybridsim::sim {

RingCollective::RingCollective(Network& network, CollectiveOp op, std::uint32_t ranks,
                               std::vector<RingChannel> channels, Bytes size, CollectiveConfig config,
                               RingSegment segment)
    : network_(network),
      queue_(network.queue()),
      op_(op),
      n_(ranks),
      ring_ranks_(segment.ring_ranks != 0 ? segment.ring_ranks : ranks),
      size_(size),
      config_(config),
      party_(segment.party) {
  if (n_ == 0) throw InternalError("collective over zero ranks");
  if (channels.empty()) throw InternalError("collective with no channels");
  if (config_.message_size.count() <= 0) throw InternalError("message size must be positive");
  if (segment.ring_ranks != 0 &&
      (op_ == CollectiveOp::Broadcast || segment.chunk_bytes.size() != n_ || ring_ranks_ % n_ != 0))
    throw InternalError("a ring segment needs a ring op, a chunk per position and a period of the ring");
  steps_ = ring_ranks_ - 1;
  if (op_ == CollectiveOp::AllReduce) steps_ = 2 * (ring_ranks_ - 1);
  reduce_steps_ =
      (op_ == CollectiveOp::AllReduce || op_ == CollectiveOp::ReduceScatter) ? ring_ranks_ - 1 : 0;
  path_.ranks = ring_ranks_;
  path_.simulated = n_;

  const auto c_count = static_cast<std::int64_t>(channels.size());
  const std::int64_t m = config_.message_size.count();
  std::int64_t max_messages = 1;
  for (std::int64_t c = 0; c < c_count; ++c) {
    channels_.push_back(channel_state(c, c_count, std::move(channels[static_cast<std::size_t>(c)]), segment));
    max_messages = std::max(max_messages, (channels_.back().chunk_bytes[0] + m - 1) / m);
  }
  size_messages(max_messages, segment);
  rate_class_ = network.rate_class(config_.timing.link_rate_scale);
  pace_ = config_.timing.channel_cap.bytes_per_second() > 0;
  if (static_cast<std::uint64_t>(steps_ + 1) * messages_per_chunk_ >= (1ULL << 32) ||
      static_cast<std::uint64_t>(c_count) * n_ >= (1ULL << 32))
    throw InternalError("collective too large to index its messages");
}

RingCollective::ChannelState RingCollective::channel_state(std::int64_t c, std::int64_t c_count,
                                                           RingChannel plan,
                                                           const RingSegment& segment) const {
  ChannelState ch;
  ch.plan = std::move(plan);
  if (ch.plan.order.size() != n_ || ch.plan.routes.size() != n_)
    throw InternalError("ring channel " + std::to_string(c) + " does not cover " + std::to_string(n_) +
                        " ranks");
  ch.position_of_rank.assign(n_, n_);
  for (std::uint32_t p = 0; p < n_; ++p) {
    const std::uint32_t r = ch.plan.order[p];
    if (r >= n_ || ch.position_of_rank[r] != n_)
      throw InternalError("ring channel " + std::to_string(c) + " is not a permutation");
    ch.position_of_rank[r] = p;
  }
  // Channel c carries S/C bytes (the first S mod C channels one more); each of its N chunks
  // S_c/N (the first S_c mod N chunks one more).
  const std::int64_t channel_bytes = size_.count() / c_count + (c < size_.count() % c_count ? 1 : 0);
  if (op_ == CollectiveOp::Broadcast) {
    ch.chunk_bytes = {channel_bytes};
  } else if (segment.ring_ranks != 0) {
    ch.chunk_bytes = segment.chunk_bytes;
  } else {
    ch.chunk_bytes.resize(n_);
    for (std::uint32_t k = 0; k < n_; ++k)
      ch.chunk_bytes[k] = channel_bytes / n_ + (k < channel_bytes % n_ ? 1 : 0);
  }
  return ch;
}

void RingCollective::size_messages(std::int64_t max_messages, const RingSegment& segment) {
  // A broadcast under a protocol pipelines along its chain of N−1 hops in at least N−1 messages
  // (equal parts), as NCCL's slices do; with fewer the chain would forward whole chunks hop by hop.
  // The ideal model keeps message_size pieces (the closed forms of sim/README.md).
  piece_ = config_.message_size.count();
  if (op_ == CollectiveOp::Broadcast && !config_.timing.is_ideal() &&
      max_messages < static_cast<std::int64_t>(n_) - 1) {
    max_messages = static_cast<std::int64_t>(n_) - 1;
    std::int64_t largest = 0;
    for (const auto& ch : channels_) largest = std::max(largest, ch.chunk_bytes[0]);
    piece_ = std::max<std::int64_t>(1, (largest + max_messages - 1) / max_messages);
  }
  if (segment.ring_ranks != 0) max_messages = segment.messages_per_chunk;
  messages_per_chunk_ = static_cast<std::uint32_t>(max_messages);
}

void RingCollective::run_state() {
  rank_.resize(n_);
  for (auto& ch : channels_) {
    ch.at.resize(n_);
    for (std::uint32_t p = 0; p < n_; ++p) {
      Position& at = ch.at[p];
      at.route = ch.plan.routes[p].data();
      at.hops = static_cast<std::uint32_t>(ch.plan.routes[p].size());
      at.step_delay = config_.timing.step_delay(ch.plan.routes[p], network_.links());
      at.ready_from = Time::max();
      at.rank = ch.plan.order[p];
      if (!ch.sent.empty()) at.edge_bytes = ch.sent[p];
      // What it must receive and send (steps × messages per chunk fit a tag's 32 bits).
      if (op_ == CollectiveOp::Broadcast) {
        if (p > 0) at.receives_left = messages_per_chunk_;
        if (p + 1 < n_) at.sends_left = messages_per_chunk_;
      } else {
        at.receives_left = steps_ * messages_per_chunk_;
        at.sends_left = steps_ * messages_per_chunk_;
      }
      if (at.receives_left > 0 || at.sends_left > 0) ++rank_[at.rank].channels_left;
    }
    ch.sent = {};
  }
}

void RingCollective::notify_rank_done(EventHandler& handler, std::uint64_t tag_base) {
  done_handler_ = &handler;
  done_tag_base_ = tag_base;
  done_at_once_ = false;
}

void RingCollective::notify_rank_done_at_once(EventHandler& handler, std::uint64_t tag_base) {
  notify_rank_done(handler, tag_base);
  done_at_once_ = true;
}

std::uint64_t RingCollective::encode(std::uint32_t c, std::uint32_t to, std::uint32_t step,
                                     std::uint32_t j) const {
  const std::uint64_t low = static_cast<std::uint64_t>(c) * n_ + to;
  const std::uint64_t high = static_cast<std::uint64_t>(step) * messages_per_chunk_ + j;
  return (high << 32) | low;
}

std::int64_t RingCollective::message_bytes(const ChannelState& ch, std::uint32_t chunk,
                                           std::uint32_t j) const {
  const std::int64_t left = ch.chunk_bytes[chunk] - static_cast<std::int64_t>(j) * piece_;
  return std::clamp<std::int64_t>(left, 0, piece_);
}

// Inlined where an arrival forwards (and in send_first_step), as handle_arrival is into on_event.
[[gnu::always_inline]] inline void RingCollective::send(std::uint32_t c, std::uint32_t from,
                                                        std::uint32_t step, std::uint32_t j, Time at,
                                                        std::int64_t bytes) {
  Position& here = channels_[c].at[from];
  const std::uint32_t to = from + 1 == n_ ? 0 : from + 1;
  here.edge_bytes += bytes;
  ++messages_sent_;
  at += here.step_delay;
  if (pace_) {
    // The channel's sender moves at most channel_cap bytes per second.
    at = max(at, here.paced_until);
    here.paced_until = at + pace_time_.of(bytes, config_.timing.channel_cap);
  }
  network_.send_at(at, Route(here.route, here.hops), Bytes::of(bytes), *this, encode(c, to, step, j),
                   rate_class_, party_);
}

void RingCollective::send_first_step(std::uint32_t rank) {
  const Time now = queue_.now() + config_.timing.base_latency;
  for (std::uint32_t c = 0; c < channels_.size(); ++c) {
    const std::uint32_t p = channels_[c].position_of_rank[rank];
    if (op_ == CollectiveOp::Broadcast && p != 0) continue;
    // In ring ops position p sends chunk p at step 0; a broadcast sends its one chunk.
    const std::uint32_t chunk = op_ == CollectiveOp::Broadcast ? 0 : p;
    for (std::uint32_t j = 0; j < messages_per_chunk_; ++j)
      send(c, p, 0, j, now, message_bytes(channels_[c], chunk, j));
  }
}

// Inlined into on_event, its caller per arrival (the call and its frame were about 20 instructions
// an arrival); start() calls it for the rare early arrival.
[[gnu::always_inline]] inline void RingCollective::handle_arrival(std::uint32_t c, std::uint32_t to,
                                                                  std::uint32_t high) {
  const std::uint32_t step = high / messages_per_chunk_;
  const std::uint32_t j = high % messages_per_chunk_;
  ChannelState& ch = channels_[c];
  Position& here = ch.at[to];
  // The chunk that arrived is the one `to` sends on at the next step: at step s position p sends
  // chunk (p − s) mod N, and (to − (s + 1)) ≡ (from − s). A broadcast has one chunk.
  const std::uint32_t from = to == 0 ? n_ - 1 : to - 1;
  const std::uint32_t chunk = op_ == CollectiveOp::Broadcast ? 0 : (from + n_ - (step % n_)) % n_;
  const std::int64_t bytes = message_bytes(ch, chunk, j);
  // Nothing leaves a rank before its protocol's base latency has passed since it joined, so steps
  // leave in order even when data arrived before the rank joined.
  Time ready = max(queue_.now(), here.ready_from);
  if (step < reduce_steps_ && config_.reduction_bandwidth.bytes_per_second() > 0)
    ready += reduce_time_.of(bytes, config_.reduction_bandwidth);
  if (ready > here.finish) here.finish = ready;
  if (config_.observer != nullptr)
    config_.observer->on_ring_arrival({this, here.rank, step, c, queue_.now()});
  const bool forward = op_ == CollectiveOp::Broadcast ? to + 1 < n_ : step + 1 < steps_;
  if (forward) send(c, to, op_ == CollectiveOp::Broadcast ? to : step + 1, j, ready, bytes);
}

void RingCollective::start(std::uint32_t rank) {
  if (!started_) {
    started_ = true;
    charge_budget();  // before its state is laid out and its first message
    run_state();
  }
  RankProgress& rs = rank_[rank];
  if (rs.started) throw InternalError("rank " + std::to_string(rank) + " started twice");
  rs.started = true;
  rs.start = queue_.now();
  rs.finish = rs.start;
  for (ChannelState& ch : channels_) {
    Position& at = ch.at[ch.position_of_rank[rank]];
    at.ready_from = rs.start + config_.timing.base_latency;
    at.finish = rs.start;
  }
  if (ring_ranks_ > 1 && steps_ > 0) send_first_step(rank);
  // Data that arrived before this rank joined is handled now, in arrival order.
  std::vector<std::uint64_t> early;
  early.swap(rs.early_arrivals);
  for (const std::uint64_t tag : early) {
    const auto low = static_cast<std::uint32_t>(tag & 0xffffffffu);
    handle_arrival(low / n_, low % n_, static_cast<std::uint32_t>(tag >> 32));
  }
  check_done(rank);
}

void RingCollective::on_event(std::uint64_t tag) {
  const auto low = static_cast<std::uint32_t>(tag & 0xffffffffu);
  if (step_hook_ != nullptr && low == 0 && (tag >> 32) % messages_per_chunk_ == 0 &&
      step_hook_->on_step_arrival(tag))
    return;
  const std::uint32_t c = low / n_;
  const std::uint32_t to = low % n_;
  const std::uint32_t from = to == 0 ? n_ - 1 : to - 1;
  // The sender's message has been delivered.
  Position& sender = channels_[c].at[from];
  Position& receiver = channels_[c].at[to];
  --sender.sends_left;
  --receiver.receives_left;
  if (receiver.ready_from == Time::max()) {  // its rank has not joined
    rank_[receiver.rank].early_arrivals.push_back(tag);
  } else {
    handle_arrival(c, to, static_cast<std::uint32_t>(tag >> 32));
  }
  check_done(sender);
  if (&receiver != &sender) check_done(receiver);  // one position: a one-position segment
}

void RingCollective::finish_rank(std::uint32_t rank) {
  if (!finish_if_complete(rank_[rank], queue_, done_at_once_ ? nullptr : done_handler_,
                          done_tag_base_ + rank))
    return;
  ++ranks_done_;
  if (done_at_once_) done_handler_->on_event(done_tag_base_ + rank);
}

Time RingCollective::rank_finish_time(std::uint32_t rank) const {
  if (rank_.empty()) return Time::zero();  // never started
  // Done: its finish. Before: the latest of its positions' so far, as the rank's own would be.
  Time t = rank_[rank].finish;
  if (!rank_[rank].done)
    for (const ChannelState& ch : channels_) t = max(t, ch.at[ch.position_of_rank[rank]].finish);
  return t;
}

Time RingCollective::finish_time() const {
  Time t = Time::zero();
  for (std::uint32_t r = 0; r < rank_.size(); ++r) t = max(t, rank_finish_time(r));
  return t;
}

Time RingCollective::step_delay(std::uint32_t c, std::uint32_t position) const {
  const ChannelState& ch = channels_[c];
  if (!ch.at.empty()) return ch.at[position].step_delay;
  return config_.timing.step_delay(ch.plan.routes[position], network_.links());  // a few hops
}

std::int64_t RingCollective::edge_bytes(std::uint32_t c, std::uint32_t position) const {
  const ChannelState& ch = channels_[c];
  if (!ch.at.empty()) return ch.at[position].edge_bytes;
  return ch.sent.empty() ? 0 : ch.sent[position];
}

std::array<Bytes, kLinkKindCount> RingCollective::bytes_by_link_kind() const {
  std::array<Bytes, kLinkKindCount> out{};
  const LinkTable& links = network_.links();
  for (std::uint32_t c = 0; c < channels_.size(); ++c)
    for (std::uint32_t p = 0; p < n_; ++p)
      for (const LinkId l : channels_[c].plan.routes[p])
        out[static_cast<std::size_t>(links[l].kind)] += Bytes::of(edge_bytes(c, p));
  return out;
}

bool RingCollective::uniform_chunks() const {
  for (const auto& ch : channels_)
    if (std::adjacent_find(ch.chunk_bytes.begin(), ch.chunk_bytes.end(), std::not_equal_to<>()) !=
        ch.chunk_bytes.end())
      return false;
  return true;
}

void RingCollective::count_channel_sent(std::uint32_t c) {
  ChannelState& ch = channels_[c];
  // At step s position p sends chunk (p − s) mod N, every message of it.
  std::vector<std::int64_t> prefix(2 * static_cast<std::size_t>(n_) + 1, 0);
  for (std::size_t k = 0; k < 2 * static_cast<std::size_t>(n_); ++k)
    prefix[k + 1] = prefix[k] + ch.chunk_bytes[k % n_];
  const std::int64_t cycles = steps_ / n_;
  const std::uint32_t rest = steps_ % n_;
  if (ch.at.empty()) ch.sent.resize(n_);  // not run (a fold's or an embedding's plan)
  for (std::uint32_t p = 0; p < n_; ++p) {
    // Chunks p, p−1, …, p−rest+1 (mod N) beyond the whole cycles: indices p+N−rest+1 … p+N.
    const std::int64_t bytes = cycles * prefix[n_] + prefix[p + n_ + 1] - prefix[p + n_ + 1 - rest];
    (ch.at.empty() ? ch.sent[p] : ch.at[p].edge_bytes) = bytes;
  }
  messages_sent_ += static_cast<std::uint64_t>(n_) * steps_ * messages_per_chunk_;
}

}  // namespace hybridsim::sim
