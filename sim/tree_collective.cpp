#include "sim/tree_collective.h"

#include <algorithm>
#include <string>

#include "sim/error.h"

namespace hybridsim::sim {
namespace {

// Arrival tags: bits 0-31 ((channel · N + rank) << 1) | direction, where `rank` receives (from a
// child: up; from its parent: down); bits 32-55 the message; bits 56-63 an up message's sender's
// slot among the receiver's children (0 down). With the sender named instead, an up arrival read
// the sender's node line for its parent and slot, mostly a D1 miss (0.30 an event in the 1,024-GPU
// step, tests/bench/MEASUREMENTS.md, perf44). The fields are fixed (no shift by the plans' widest
// rank, which cost 2.9% of bench_collective's tree instructions, perf45): a rank has at most 255
// children (check_fits) and a channel fewer than 2^24 messages (kMaxMessages, the constructor: at
// the default 512-KiB messages, 8 TiB a channel, where a collective is at most 1 TiB a rank).
constexpr std::uint64_t kUp = 0, kDown = 1;
constexpr unsigned kMessageShift = 32, kSlotShift = 56;
constexpr std::uint32_t kMaxMessages = std::uint32_t{1} << (kSlotShift - kMessageShift);

// The tag's high half (message, and the slot in its top byte) split.
std::uint32_t message_of(std::uint32_t high) { return high & (kMaxMessages - 1); }
std::uint32_t slot_of(std::uint32_t high) { return high >> (kSlotShift - kMessageShift); }

// The tag of a rank's messages up but their number: its parent in channel c of n ranks, and its
// slot among the parent's children.
std::uint64_t up_tag(std::uint32_t c, std::uint32_t n, std::int32_t parent, std::uint8_t slot_in_parent) {
  return (static_cast<std::uint64_t>(slot_in_parent) << kSlotShift) |
         ((static_cast<std::uint64_t>(c) * n + static_cast<std::uint32_t>(parent)) << 1) | kUp;
}

// An arrival tag decoded, with one division.
struct ArrivalTag {
  std::uint32_t channel, rank, high;  // high: the message and slot (message_of, slot_of)
  bool up;
};
ArrivalTag decode(std::uint64_t tag, std::uint32_t n) {
  const auto low = static_cast<std::uint32_t>(tag & 0xffffffffu);
  const std::uint32_t c = (low >> 1) / n;
  return {c, (low >> 1) - c * n, static_cast<std::uint32_t>(tag >> kMessageShift), (low & 1) == kUp};
}

void check_tree(const TreeChannel& t, std::uint32_t n, std::size_t c) {
  auto fail = [&](const std::string& why) {
    throw InternalError("tree channel " + std::to_string(c) + ": " + why);
  };
  if (t.parent.size() != n || t.up.size() != n || t.children.size() != n || t.down.size() != n)
    fail("does not cover " + std::to_string(n) + " ranks");
  int roots = 0;
  std::vector<int> listed(n, 0);
  for (std::uint32_t r = 0; r < n; ++r) {
    if (t.parent[r] < 0) ++roots;
    else if (static_cast<std::uint32_t>(t.parent[r]) >= n) fail("bad parent");
    if (t.down[r].size() != t.children[r].size()) fail("a child without a route");
    for (const std::uint32_t k : t.children[r]) {
      if (k >= n || t.parent[k] != static_cast<std::int32_t>(r)) fail("child and parent disagree");
      ++listed[k];
    }
  }
  for (std::uint32_t r = 0; r < n; ++r)
    if (listed[r] != (t.parent[r] < 0 ? 0 : 1)) fail("rank " + std::to_string(r) + " is listed wrongly");
  if (roots != 1) fail("needs exactly one root");
}

// The height of a checked tree: the longest way from a rank to the root. Throws when a rank does
// not reach the root (a cycle). Each rank's depth is found once, from the nearest known ancestor's.
std::int64_t tree_height(const TreeChannel& t, std::uint32_t n, std::size_t c) {
  std::vector<std::int64_t> depth(n, -1);
  std::vector<std::uint32_t> path;
  std::int64_t height = 0;
  for (std::uint32_t r = 0; r < n; ++r) {
    path.clear();
    std::int64_t x = r;
    while (x >= 0 && depth[static_cast<std::size_t>(x)] < 0) {
      if (path.size() > n) throw InternalError("tree channel " + std::to_string(c) + ": has a cycle");
      path.push_back(static_cast<std::uint32_t>(x));
      x = t.parent[static_cast<std::size_t>(x)];
    }
    std::int64_t d = x < 0 ? -1 : depth[static_cast<std::size_t>(x)];
    for (auto it = path.rbegin(); it != path.rend(); ++it) depth[*it] = ++d;
    height = std::max(height, depth[r]);
  }
  return height;
}

// What a node's and an edge's fields must hold, checked as the plan is built (the nodes are laid out
// only when the tree runs): at most 255 children and 255 links a route, and a rank's messages in
// one channel (its edges' count × the messages per channel) within 32 bits.
void check_fits(const TreeChannel& t, std::uint32_t n, std::uint32_t messages) {
  for (std::uint32_t r = 0; r < n; ++r) {
    if (t.children[r].size() > 0xff)
      throw InternalError("a tree rank with more than 255 children (channel plans are binary trees)");
    // Not empty either: an arrival's sends do not test it (Network::send_at_unchecked).
    const auto fits = [](const std::vector<LinkId>& route) { return !route.empty() && route.size() <= 0xff; };
    if (t.parent[r] >= 0 && !fits(t.up[r])) throw InternalError("a tree route of no links or more than 255");
    for (const auto& route : t.down[r])
      if (!fits(route)) throw InternalError("a tree route of no links or more than 255");
    if ((t.children[r].size() + (t.parent[r] >= 0 ? 1u : 0u)) * std::uint64_t{messages} > 0xffffffffu)
      throw InternalError("too many messages per tree channel");
  }
}

// The slots a channel lays out: one per child, and a padding slot wherever a rank of two or more
// children would start at an odd slot (TreeCollective::ChannelState::slots).
std::size_t slot_count(const TreeChannel& t) {
  std::size_t slots = 0;
  for (const auto& children : t.children) slots += children.size() + (children.size() > 1 ? slots % 2 : 0);
  return slots;
}

// The plans a tree runs: the segment's channels, or all of them.
std::vector<const TreeChannel*> segment_plans(const std::vector<TreeChannel>& plans,
                                              const TreeSegment& segment) {
  std::vector<const TreeChannel*> out;
  for (const std::uint32_t c : segment.channels) {
    if (c >= plans.size()) throw InternalError("a tree segment of a channel the plans lack");
    out.push_back(&plans[c]);
  }
  if (segment.channels.empty())
    for (const TreeChannel& t : plans) out.push_back(&t);
  return out;
}

}  // namespace

TreeCollective::TreeCollective(Network& network, std::uint32_t ranks, std::vector<TreeChannel> channels,
                               Bytes size, CollectiveConfig config, TreeSegment segment)
    : TreeCollective(network, ranks, std::make_shared<const std::vector<TreeChannel>>(std::move(channels)),
                     size, config, std::move(segment)) {}

TreeCollective::TreeCollective(Network& network, std::uint32_t ranks,
                               std::shared_ptr<const std::vector<TreeChannel>> plans, Bytes size,
                               CollectiveConfig config, TreeSegment segment)
    : network_(network),
      queue_(network.queue()),
      n_(ranks),
      config_(config),
      plans_(std::move(plans)) {
  if (plans_ == nullptr) throw InternalError("a tree collective without channels");
  const std::vector<const TreeChannel*> channels = segment_plans(*plans_, segment);
  path_.unit = "tree channels";
  path_.ranks = static_cast<std::uint32_t>(channels.size());
  if (segment.messages > 0 && segment.channel_bytes.size() != channels.size())
    throw InternalError("a tree segment needs the bytes of each of its channels");
  if (n_ == 0) throw InternalError("collective over zero ranks");
  if (channels.empty()) throw InternalError("collective with no channels");
  if (config_.message_size.count() <= 0) throw InternalError("message size must be positive");
  if (static_cast<std::uint64_t>(channels.size()) * n_ >= (1ULL << 31))
    throw InternalError("collective too large to index its messages");
  const auto c_count = static_cast<std::int64_t>(channels.size());
  const std::int64_t m = config_.message_size.count();
  std::int64_t max_messages = 1;
  for (std::int64_t c = 0; c < c_count; ++c) {
    ChannelState ch;
    ch.plan = channels[static_cast<std::size_t>(c)];
    check_tree(*ch.plan, n_, static_cast<std::size_t>(c));
    // Channel c carries S/C bytes (the first S mod C channels one more).
    ch.bytes = segment.messages > 0 ? segment.channel_bytes[static_cast<std::size_t>(c)]
                                    : size.count() / c_count + (c < size.count() % c_count ? 1 : 0);
    max_messages = std::max(max_messages, (ch.bytes + m - 1) / m);
    max_messages = std::max(max_messages, 2 * tree_height(*ch.plan, n_, static_cast<std::size_t>(c)));
    channels_.push_back(std::move(ch));
  }
  messages_ = segment.messages > 0 ? segment.messages : static_cast<std::uint32_t>(max_messages);
  if (messages_ >= kMaxMessages)
    throw InternalError("too many messages per tree channel: " + std::to_string(messages_) + " (at most " +
                        std::to_string(kMaxMessages - 1) + "); raise the message size");
  rate_class_ = network.rate_class(config_.timing.link_rate_scale);
  for (ChannelState& ch : channels_) {
    check_fits(*ch.plan, n_, messages_);
    size_messages(ch);
  }
}

void TreeCollective::run_state() {
  rank_.resize(n_);
  for (ChannelState& ch : channels_) {
    ch.nodes.resize(n_);
    if (config_.timing.channel_cap.bytes_per_second() > 0) ch.paced_until.assign(n_, Time::zero());
    std::size_t links = 0;  // reserved, so that the edges' pointers into ch.links stay valid
    for (std::uint32_t r = 0; r < n_; ++r) {
      links += ch.plan->up[r].size();
      for (const auto& route : ch.plan->down[r]) links += route.size();
    }
    ch.links.reserve(links);
    ch.slots.reserve(slot_count(*ch.plan));
    for (std::uint32_t r = 0; r < n_; ++r) {
      Node& node = ch.nodes[r];
      node.parent = ch.plan->parent[r];
      node.ready_from = Time::max();
      if (ch.plan->children[r].size() > 1 && ch.slots.size() % 2 == 1) ch.slots.emplace_back();  // padding
      node.first_child = static_cast<std::uint32_t>(ch.slots.size());
      node.child_count = static_cast<std::uint8_t>(ch.plan->children[r].size());  // checked: at most 255
      for (std::uint32_t k = 0; k < node.child_count; ++k) {
        const std::uint32_t child = ch.plan->children[r][k];
        ch.nodes[child].slot_in_parent = static_cast<std::uint8_t>(k);
        ch.slots.push_back({edge(ch, ch.plan->down[r][k]), child, 0});
      }
      if (node.parent >= 0) {
        const Edge up = edge(ch, ch.plan->up[r]);
        node.up_route = up.route;
        node.up_delay = up.delay;
        node.up_hops = up.hops;
        node.up_mix = up.mix;
      }
      // Each edge carries every message once each way, so a rank receives as many as it sends
      // (checked to fit 32 bits).
      const auto sends = static_cast<std::uint32_t>((node.child_count + (node.parent >= 0 ? 1u : 0u)) *
                                                    std::uint64_t{messages_});
      node.receives_left = sends;
      node.sends_left = sends;
      if (sends > 0) ++rank_[r].channels_left;
    }
  }
}

TreeCollective::Edge TreeCollective::edge(ChannelState& ch, const std::vector<LinkId>& route) {
  const std::size_t first = ch.links.size();
  ch.links.insert(ch.links.end(), route.begin(), route.end());
  std::array<std::uint8_t, kLinkKindCount> kinds{};
  for (const LinkId l : route) ++kinds[static_cast<std::size_t>(network_.links()[l].kind)];
  // A handful of mixes (inside a machine, across machines): a linear search finds them.
  const auto mix = static_cast<std::size_t>(
      std::find(kind_mixes_.begin(), kind_mixes_.end(), kinds) - kind_mixes_.begin());
  if (mix > 0xff) throw InternalError("a tree's routes of more than 256 mixes of link kinds");
  if (mix == kind_mixes_.size()) {
    kind_mixes_.push_back(kinds);
    mix_bytes_.push_back(0);
  }
  return {ch.links.data() + first, config_.timing.step_delay(route, network_.links()),
          static_cast<std::uint8_t>(route.size()), static_cast<std::uint8_t>(mix)};
}

void TreeCollective::size_messages(ChannelState& ch) const {
  // Equal parts (the first bytes mod m one larger).
  ch.base = ch.bytes / messages_;
  ch.longer = static_cast<std::uint32_t>(ch.bytes % messages_);
  for (std::size_t i = 0; i < 2; ++i) {
    const Bytes b = Bytes::of(ch.base + (i == 0 ? 1 : 0));
    if (config_.timing.channel_cap.bytes_per_second() > 0)
      ch.pace[i] = transfer_time(b, config_.timing.channel_cap);
    if (config_.reduction_bandwidth.bytes_per_second() > 0)
      ch.reduce[i] = transfer_time(b, config_.reduction_bandwidth);
  }
}

void TreeCollective::notify_rank_done(EventHandler& handler, std::uint64_t tag_base) {
  done_handler_ = &handler;
  done_tag_base_ = tag_base;
}

[[gnu::always_inline]] inline void TreeCollective::send(ChannelState& ch, std::uint32_t from,
                                                        const Edge& edge, std::uint64_t low, std::uint32_t j,
                                                        Time at, bool known_not_past) {
  // `low` holds the receiver and direction, and for an up message the sender's slot (bits 56-63).
  const std::size_t shorter = j < ch.longer ? 0 : 1;
  const std::int64_t bytes = ch.base + 1 - static_cast<std::int64_t>(shorter);
  at += edge.delay;
  if (!ch.paced_until.empty()) {
    at = max(at, ch.paced_until[from]);
    ch.paced_until[from] = at + ch.pace[shorter];
  }
  mix_bytes_[edge.mix] += bytes;
  ++messages_sent_;
  const std::uint64_t tag = (static_cast<std::uint64_t>(j) << kMessageShift) | low;
  // The route and class were checked as the plan was built (check_fits, the constructor); an
  // arrival's sends are at its time plus delays, none negative. A leaf's first sends go checked.
  if (known_not_past)
    network_.send_at_unchecked(at, Route(edge.route, edge.hops), Bytes::of(bytes), *this, tag, rate_class_);
  else
    network_.send_at(at, Route(edge.route, edge.hops), Bytes::of(bytes), *this, tag, rate_class_);
}

// send_up and send_down are inlined into the arrival's handling (their calls' frames were about
// 15 instructions a message).
[[gnu::always_inline]] inline void TreeCollective::send_up(std::uint32_t c, std::uint32_t r, std::uint32_t j,
                                                           Time at) {
  ChannelState& ch = channels_[c];
  const Node& node = ch.nodes[r];
  send(ch, r, node.up(), up_tag(c, n_, node.parent, node.slot_in_parent), j, at, true);
}

[[gnu::always_inline]] inline void TreeCollective::send_down(std::uint32_t c, std::uint32_t r,
                                                             std::uint32_t j, Time at) {
  ChannelState& ch = channels_[c];
  const Node& node = ch.nodes[r];
  for (std::uint32_t k = 0; k < node.child_count; ++k) {
    const ChildSlot& slot = ch.slots[node.first_child + k];
    send(ch, r, slot.down, ((static_cast<std::uint64_t>(c) * n_ + slot.child) << 1) | kDown, j, at, true);
  }
}

void TreeCollective::start(std::uint32_t rank) { start_at(rank, queue_.now()); }

void TreeCollective::start_at(std::uint32_t rank, Time joined) {
  charge_budget();  // before its state is laid out and its first message (sim/budget.h)
  if (!laid_out()) run_state();
  RankProgress& rs = rank_[rank];
  if (rs.started) throw InternalError("rank " + std::to_string(rank) + " started twice");
  if (joined > queue_.now()) throw InternalError("a tree rank joins in the future");
  rs.started = true;
  rs.start = joined;
  rs.finish = rs.start;
  for (ChannelState& ch : channels_) {
    ch.nodes[rank].ready_from = joined + config_.timing.base_latency;
    ch.nodes[rank].finish = joined;
  }
  send_leaves(rank, joined + config_.timing.base_latency);
  std::vector<std::uint64_t> early;
  early.swap(rs.early_arrivals);
  for (const std::uint64_t tag : early) handle(tag);
  check_done(rank);
}

void TreeCollective::send_leaves(std::uint32_t rank, Time at) {
  for (std::uint32_t c = 0; c < channels_.size(); ++c) {
    ChannelState& ch = channels_[c];
    const Node& node = ch.nodes[rank];
    // A leaf has nothing to wait for: all its messages go up at once (its edge and tag read once:
    // the sends' stores might alias the node for the compiler).
    if (node.child_count == 0 && node.parent >= 0) {
      const Edge up = node.up();
      const std::uint64_t low = up_tag(c, n_, node.parent, node.slot_in_parent);
      for (std::uint32_t j = 0; j < messages_; ++j) send(ch, rank, up, low, j, at, false);
    }
  }
}

// Inlined into on_event, its one caller per arrival (the call and its frame were about 20
// instructions an arrival); handle(tag) calls it for the rare early arrival. r receives; `high` is
// the tag's high half: the message and, for an up arrival, the sender's slot among r's children.
[[gnu::always_inline]] inline void TreeCollective::handle(ChannelState& ch, std::uint32_t c, std::uint32_t r,
                                                          bool up, std::uint32_t high) {
  const std::uint32_t j = message_of(high);
  const Time now = queue_.now();
  if (!up) {
    // Message j of the result reached r: it is done with it and passes it on (not before its base
    // latency has passed since it joined, as in the ring).
    Node& node = ch.nodes[r];
    if (now > node.finish) node.finish = now;
    node.done = max(node.done, now);
    send_down(c, r, j, max(now, node.ready_from));
    return;
  }
  // A child's message arrived at r (from its `slot`): complete there once every child has delivered it.
  Node& node = ch.nodes[r];
  // Children deliver in order, so one arrival completes at most one message: number `reduced`. From
  // an only child (the chains inside a machine: most up arrivals), every arrival completes one, so
  // its count is not kept and its slot's line not read.
  if (node.child_count > 1) {
    ChildSlot* slots = ch.slots.data() + node.first_child;
    ++slots[slot_of(high)].received;
    std::uint32_t least = messages_;
    for (std::uint32_t k = 0; k < node.child_count; ++k) least = std::min(least, slots[k].received);
    if (least <= node.reduced) return;
  }
  const std::uint32_t m = node.reduced++;
  Time ready = max(now, node.ready_from);
  ready += ch.reduce[m < ch.longer ? 0 : 1];  // zero without a reduction bandwidth
  if (ready > node.finish) node.finish = ready;
  node.done = max(node.done, ready);
  if (node.parent >= 0) send_up(c, r, m, ready);
  else send_down(c, r, m, ready);  // the root holds the full sum of message m
}

void TreeCollective::on_event(std::uint64_t tag) {
  // handle() takes what was decoded here. The tag names the receiver (and an up message's slot
  // among its children), so that an arrival reads the receiver's node line, not the sender's first.
  const auto [c, receiver, high, up] = decode(tag, n_);
  const std::uint32_t j = message_of(high);
  ChannelState& ch = channels_[c];
  // The latest the receiver has done anything (a reduction may end later than now).
  const Time now = queue_.now();
  Node& to = ch.nodes[receiver];
  to.done = max(to.done, now);
  --to.receives_left;
  if (to.ready_from == Time::max()) rank_[receiver].early_arrivals.push_back(tag);  // not joined
  else handle(ch, c, receiver, up, high);
  // The sender's node is read and written by its edge's last message only (a second line an
  // arrival, mostly a D1 miss, was read for each): an edge delivers its messages in order (links
  // serve first come first, same-time events keep their order), so the last to arrive is the last
  // sent, at the latest of the edge's times, and the sender is idle once its every edge has
  // delivered its last. Its `done` is read once the tree has finished (node_done), when it is the
  // same; nothing in handle() reads the sender's counts. An up message's sender is in its slot's
  // line, which handle() read; a down one's is the receiver's parent.
  if (j == messages_ - 1) {
    const std::uint32_t sender =
        up ? ch.slots[to.first_child + slot_of(high)].child : static_cast<std::uint32_t>(to.parent);
    Node& from = ch.nodes[sender];
    from.done = max(from.done, now);
    from.sends_left -= messages_;
    check_done(from, sender);
  }
  check_done(to, receiver);
}

void TreeCollective::handle(std::uint64_t tag) {
  const ArrivalTag t = decode(tag, n_);
  handle(channels_[t.channel], t.channel, t.rank, t.up, t.high);
}

void TreeCollective::finish_rank(std::uint32_t rank) {
  if (finish_if_complete(rank_[rank], queue_, done_handler_, done_tag_base_ + rank)) ++ranks_done_;
}

Time TreeCollective::up_delay(std::uint32_t c, std::uint32_t r) const {
  const ChannelState& ch = channels_[c];
  if (laid_out()) return ch.nodes[r].up_delay;
  return ch.plan->parent[r] < 0 ? Time::zero() : config_.timing.step_delay(ch.plan->up[r], network_.links());
}

Time TreeCollective::down_delay(std::uint32_t c, std::uint32_t r, std::uint32_t k) const {
  const ChannelState& ch = channels_[c];
  if (laid_out()) return ch.slots[ch.nodes[r].first_child + k].down.delay;
  return config_.timing.step_delay(ch.plan->down[r][k], network_.links());
}

std::uint32_t TreeCollective::slot_in_parent(std::uint32_t c, std::uint32_t r) const {
  const ChannelState& ch = channels_[c];
  if (laid_out()) return ch.nodes[r].slot_in_parent;
  const std::int32_t p = ch.plan->parent[r];
  if (p < 0) return 0;  // the root's node says 0 too
  const auto& siblings = ch.plan->children[static_cast<std::size_t>(p)];
  return static_cast<std::uint32_t>(std::find(siblings.begin(), siblings.end(), r) - siblings.begin());
}

Time TreeCollective::rank_finish_time(std::uint32_t rank) const {
  if (!laid_out()) return Time::zero();  // never started
  // Done: its finish. Before: the latest of its channels' so far, as the rank's own would be.
  Time t = rank_[rank].finish;
  if (!rank_[rank].done)
    for (const ChannelState& ch : channels_) t = max(t, ch.nodes[rank].finish);
  return t;
}

Time TreeCollective::finish_time() const {
  Time t = Time::zero();
  for (std::uint32_t r = 0; r < rank_.size(); ++r) t = max(t, rank_finish_time(r));
  return t;
}

std::array<Bytes, kLinkKindCount> TreeCollective::bytes_by_link_kind() const {
  std::array<Bytes, kLinkKindCount> out{};
  for (std::size_t m = 0; m < kind_mixes_.size(); ++m)
    for (std::size_t k = 0; k < out.size(); ++k)
      out[k] = Bytes::of(out[k].count() + mix_bytes_[m] * kind_mixes_[m][k]);
  return out;
}

}  // namespace hybridsim::sim
