// Folding a tree collective onto the representatives of its equivalent channels (sim/README.md,
// "Folding"). Inside one tree no two positions are alike: every position has its own path from the
// root, and a parent's messages to its children leave one after the other over its NIC, so every
// child sees its own times. But the channels of a tree collective repeat: tree channels that share
// links form a group (the two trees of a ring channel share its chain and NIC), and two groups
// whose positions correspond one to one (the same routes link by link, the same delays and bytes,
// the same links shared in the same way, and leaves that send in the same order) take the same
// timeline. So one group of each kind is simulated, message by message, on a queue and links of
// its own, and its result (each position's last activity, each link's use) is copied to the
// groups it stands for. Exact when every rank joins at one time and nothing else crosses the
// links while the tree runs; otherwise the tree runs in full (or the caller runs again in full).
#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "sim/error.h"
#include "sim/fast/link_claims.h"
#include "sim/tree_collective.h"

namespace hybridsim::sim {

namespace {

constexpr std::uint32_t kNone = 0xffffffffu;

// Starts a model's ranks on its own queue, in the order its real ranks joined.
class ModelStarter final : public EventHandler {
 public:
  explicit ModelStarter(TreeCollective& tree) : tree_(tree) {}
  void on_event(std::uint64_t rank) override { tree_.start(static_cast<std::uint32_t>(rank)); }

 private:
  TreeCollective& tree_;
};

bool is_leaf(const TreeChannel& t, std::uint32_t r) { return t.children[r].empty() && t.parent[r] >= 0; }

// How long after a rank joins its first message can enter a link: the protocol's base latency and
// the least delay of a leaf's send (only leaves send before they have received).
template <class Channels>
Time first_message_lead(const Channels& channels, std::uint32_t n, Time base_latency) {
  Time least = Time::max();
  for (const auto& ch : channels)
    for (std::uint32_t r = 0; r < n; ++r)
      if (is_leaf(*ch.plan, r)) least = min(least, ch.nodes[r].up.delay);
  return least == Time::max() ? base_latency : base_latency + least;
}

}  // namespace

// Group b in terms of group a: position[i][r] is the rank at a's channel i rank r's place in b's
// channel i; link maps a's links to b's (one to one).
struct TreeCollective::Correspondence {
  std::vector<std::vector<std::uint32_t>> position;
  std::unordered_map<LinkId, LinkId> link;
  std::unordered_map<LinkId, LinkId> back;
  bool with_leaves = false;          // also require the leaves to send in the same order
  std::vector<std::uint32_t> order;  // b's channels in the order that corresponds to a's
};

struct TreeCollective::ModelRun {
  std::vector<std::vector<Time>> done;             // [channel in group][rank]
  std::unordered_map<LinkId, std::size_t> model_link;  // the group's real link → model link
  std::vector<LinkId> real_link;                   // per model link
  std::vector<LinkCounters> use;                   // per model link
  std::vector<Time> busy_until;                    // per model link
  std::uint64_t events = 0;
  std::uint64_t messages = 0;
  std::array<Bytes, kLinkKindCount> bytes{};
};

const char* TreeCollective::fold_refusal() {
  if (config_.fast_path == FastPath::Off) return "fast path off";
  if (network_.observer() != nullptr) return "a trace records every message";
  if (n_ < 2) return "a single rank";
  // The fold is decided just before the first message is due; with no delay before it, that
  // is when the first rank joins.
  const Time lead = first_message_lead(channels_, n_, config_.timing.base_latency);
  if (lead <= Time::zero()) return "a tree without protocol latency";
  groups_ = channel_groups();
  if (groups_.size() < 2) return "a tree whose channels all share links";
  bool alike = false;
  Correspondence map;
  for (std::size_t g = 1; g < groups_.size() && !alike; ++g)
    for (std::size_t h = 0; h < g && !alike; ++h) alike = correspond(groups_[h], groups_[g], map);
  if (!alike) return "a tree whose channel groups differ";
  if (!claim_links()) return "its links are still busy or held by another folded collective";
  queue_.schedule_at(queue_.now() + lead - Time::ps(1), *this, std::uint64_t{0xfffffffeu} << 32);
  return nullptr;
}

bool TreeCollective::claim_links() {
  // Each link must be free of anything else by the time the first message can reach it.
  const Time first_send = queue_.now() + first_message_lead(channels_, n_, config_.timing.base_latency);
  LinkClaims& claims = LinkClaims::of(network_);
  auto claim = [&](const std::vector<LinkId>& route) {
    for (const LinkId l : route) {
      const EventHandler* owner = claims.holder(l);
      if (owner == this) continue;
      if (owner != nullptr && claims.end(l) >= first_send) return false;
      if (network_.busy_until(l) > first_send) return false;
      claims.claim(l, this);
    }
    return true;
  };
  for (const ChannelState& ch : channels_)
    for (std::uint32_t r = 0; r < n_; ++r) {
      bool ok = claim(ch.plan->up[r]);
      for (std::size_t k = 0; ok && k < ch.plan->down[r].size(); ++k) ok = claim(ch.plan->down[r][k]);
      if (!ok) {
        release_links(n_);
        return false;
      }
    }
  return true;
}

void TreeCollective::release_links(std::uint32_t rank) {
  LinkClaims& claims = LinkClaims::of(network_);
  auto release = [&](const std::vector<LinkId>& route) {
    for (const LinkId l : route) claims.release(l, this);
  };
  for (const ChannelState& ch : channels_) {
    const std::uint32_t first = rank == n_ ? 0 : rank;
    const std::uint32_t last = rank == n_ ? n_ : rank + 1;
    for (std::uint32_t r = first; r < last; ++r) {
      release(ch.plan->up[r]);
      for (const auto& route : ch.plan->down[r]) release(route);
      if (rank == n_) continue;  // every route is some rank's way out
      for (const std::uint32_t child : ch.plan->children[r]) release(ch.plan->up[child]);
      if (const std::int32_t p = ch.plan->parent[r]; p >= 0)
        release(ch.plan->down[static_cast<std::size_t>(p)][ch.nodes[r].slot_in_parent]);
    }
  }
}

std::vector<std::vector<std::uint32_t>> TreeCollective::channel_groups() const {
  // Union-find over channels: two channels that use one link are in one group.
  const auto count = static_cast<std::uint32_t>(channels_.size());
  std::vector<std::uint32_t> root(count);
  std::iota(root.begin(), root.end(), 0u);
  auto find = [&](std::uint32_t c) {
    while (root[c] != c) c = root[c] = root[root[c]];
    return c;
  };
  std::vector<std::uint32_t> user(network_.links().size(), kNone);
  auto visit = [&](std::uint32_t c, const std::vector<LinkId>& route) {
    for (const LinkId l : route) {
      if (user[l] == kNone) user[l] = c;
      else root[find(c)] = find(user[l]);
    }
  };
  for (std::uint32_t c = 0; c < count; ++c)
    for (std::uint32_t r = 0; r < n_; ++r) {
      visit(c, channels_[c].plan->up[r]);
      for (const auto& route : channels_[c].plan->down[r]) visit(c, route);
    }
  std::vector<std::vector<std::uint32_t>> groups;
  std::vector<std::uint32_t> index(count, kNone);
  for (std::uint32_t c = 0; c < count; ++c) {
    const std::uint32_t g = find(c);
    if (index[g] == kNone) {
      index[g] = static_cast<std::uint32_t>(groups.size());
      groups.emplace_back();
    }
    groups[index[g]].push_back(c);  // channels in index order, as a rank's start visits them
  }
  return groups;
}

bool TreeCollective::correspond(const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& group,
                                Correspondence& map) const {
  if (a.size() != group.size()) return false;
  // b's channels may stand for a's in any order (a machine's rings need not be numbered alike).
  auto in_order = [&]() -> bool {
    const std::vector<std::uint32_t>& b = map.order;
    map.position.assign(a.size(), std::vector<std::uint32_t>(n_, kNone));
    map.link.clear();
    map.back.clear();
    const LinkTable& links = network_.links();
    auto same_route = [&](const std::vector<LinkId>& x, const std::vector<LinkId>& y) {
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i) {
        const LinkSpec& p = links[x[i]];
        const LinkSpec& q = links[y[i]];
        if (p.kind != q.kind || p.bandwidth != q.bandwidth || p.latency != q.latency) return false;
        // The same links shared the same way: the map must stay one to one.
        if (map.link.emplace(x[i], y[i]).first->second != y[i]) return false;
        if (map.back.emplace(y[i], x[i]).first->second != x[i]) return false;
      }
      return true;
    };
    for (std::size_t i = 0; i < a.size(); ++i) {
      const ChannelState& p = channels_[a[i]];
      const ChannelState& q = channels_[b[i]];
      if (p.bytes != q.bytes) return false;
      std::vector<std::pair<std::uint32_t, std::uint32_t>> todo;
      for (std::uint32_t r = 0; r < n_ && todo.empty(); ++r)
        if (p.plan->parent[r] < 0) todo.emplace_back(r, kNone);
      for (std::uint32_t r = 0; r < n_ && todo.back().second == kNone; ++r)
        if (q.plan->parent[r] < 0) todo.back().second = r;
      map.position[i][todo.back().first] = todo.back().second;
      // Walk both trees from their roots, child slot by child slot.
      while (!todo.empty()) {
        const auto [x, y] = todo.back();
        todo.pop_back();
        const auto& kx = p.plan->children[x];
        const auto& ky = q.plan->children[y];
        if (kx.size() != ky.size()) return false;
        for (std::size_t k = 0; k < kx.size(); ++k) {
          if (p.slots[p.nodes[x].first_child + k].down.delay !=
                  q.slots[q.nodes[y].first_child + k].down.delay ||
              p.nodes[kx[k]].up.delay != q.nodes[ky[k]].up.delay)
            return false;
          if (!same_route(p.plan->down[x][k], q.plan->down[y][k]) ||
              !same_route(p.plan->up[kx[k]], q.plan->up[ky[k]]))
            return false;
          map.position[i][kx[k]] = ky[k];
          todo.emplace_back(kx[k], ky[k]);
        }
      }
    }
    return true;
  };
  map.order = group;
  std::sort(map.order.begin(), map.order.end());
  do {
    if (in_order() && (!map.with_leaves || leaves_send_alike(a, map.order, map))) return true;
  } while (std::next_permutation(map.order.begin(), map.order.end()));
  return false;
}

bool TreeCollective::leaves_send_alike(const std::vector<std::uint32_t>& a,
                                       const std::vector<std::uint32_t>& b, const Correspondence& map) const {
  // Every rank joined at one time; the order in which their leaves queued their messages is the
  // order in which those messages meet on shared links. In b's terms both must be the same.
  // A rank's start visits channels in index order: a's are sorted, b's may be matched in another.
  std::vector<std::size_t> b_order(b.size());
  std::iota(b_order.begin(), b_order.end(), std::size_t{0});
  std::sort(b_order.begin(), b_order.end(), [&](std::size_t x, std::size_t y) { return b[x] < b[y]; });
  std::vector<std::uint64_t> sa, sb;
  for (const std::uint32_t r : join_order_)
    for (std::size_t k = 0; k < a.size(); ++k) {
      if (is_leaf(*channels_[a[k]].plan, r)) sa.push_back((std::uint64_t{k} << 32) | map.position[k][r]);
      const std::size_t i = b_order[k];
      if (is_leaf(*channels_[b[i]].plan, r)) sb.push_back((std::uint64_t{i} << 32) | r);
    }
  return sa == sb;
}

TreeCollective::ModelRun TreeCollective::run_model(const std::vector<std::uint32_t>& group) const {
  ModelRun out;
  LinkTable links;
  auto remap = [&](const std::vector<LinkId>& route) {
    std::vector<LinkId> mine;
    for (const LinkId l : route) {
      const auto [it, added] = out.model_link.emplace(l, links.size());
      if (added) {
        links.add(network_.links()[l]);
        out.real_link.push_back(l);
      }
      mine.push_back(static_cast<LinkId>(it->second));
    }
    return mine;
  };
  std::vector<TreeChannel> plans;
  TreeFoldModel fold{messages_, {}};
  for (const std::uint32_t c : group) {
    const TreeChannel& t = *channels_[c].plan;
    TreeChannel plan{t.parent, {}, t.children, {}};
    plan.up.resize(n_);
    plan.down.resize(n_);
    for (std::uint32_t r = 0; r < n_; ++r) {
      plan.up[r] = remap(t.up[r]);
      for (const auto& route : t.down[r]) plan.down[r].push_back(remap(route));
    }
    plans.push_back(std::move(plan));
    fold.channel_bytes.push_back(channels_[c].bytes);
  }
  EventQueue queue;
  Network network(queue, links, network_.switching());
  CollectiveConfig config = config_;
  config.fast_path = FastPath::Off;
  config.observer = nullptr;
  TreeCollective model(network, n_, std::move(plans), Bytes::of(0), config, std::move(fold));
  ModelStarter starter(model);
  for (const std::uint32_t r : join_order_) queue.schedule_at(rank_[r].start, starter, r);
  queue.run();
  if (!model.is_done()) throw InternalError("a folded tree's model did not finish");
  out.done.resize(group.size());
  for (std::uint32_t i = 0; i < group.size(); ++i)
    for (std::uint32_t r = 0; r < n_; ++r) out.done[i].push_back(model.node_done(i, r));
  for (LinkId l = 0; l < links.size(); ++l) {
    out.use.push_back(network.counters(l));
    out.busy_until.push_back(network.busy_until(l));
  }
  out.events = queue.events_processed() - n_;  // the starters stand for the real ranks' joins
  out.messages = model.messages_sent();
  out.bytes = model.bytes_by_link_kind();
  return out;
}

void TreeCollective::decide_deferred() {
  if (mode_ == Mode::Deferred) go_full();  // not every rank has joined: the tree runs in full
}

void TreeCollective::go_full() {
  mode_ = Mode::Full;
  path_.reason = "ranks joined at different times";
  // The claims end once the first messages are under way: what crosses the links before then
  // could have met them, so it still marks the network interfered.
  const Time first_send =
      rank_[join_order_.front()].start + first_message_lead(channels_, n_, config_.timing.base_latency);
  LinkClaims& claims = LinkClaims::of(network_);
  for (const ChannelState& ch : channels_)
    for (std::uint32_t r = 0; r < n_; ++r) {
      for (const LinkId l : ch.plan->up[r])
        if (claims.holder(l) == this) claims.end_at(l, first_send + Time::ps(1));
      for (const auto& route : ch.plan->down[r])
        for (const LinkId l : route)
          if (claims.holder(l) == this) claims.end_at(l, first_send + Time::ps(1));
    }
  // The ranks that joined send as they would have when they joined (their messages are not due yet).
  for (const std::uint32_t r : join_order_) {
    send_leaves(r, rank_[r].start + config_.timing.base_latency);
    check_done(r);
  }
}

void TreeCollective::run_folded() {
  // Each group stands for itself or for the first earlier group it corresponds to.
  std::vector<std::size_t> rep(groups_.size());
  std::vector<Correspondence> maps(groups_.size());
  std::uint32_t simulated = 0;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    rep[g] = g;
    maps[g].with_leaves = true;
    for (std::size_t h = 0; h < g && rep[g] == g; ++h)
      if (rep[h] == h && correspond(groups_[h], groups_[g], maps[g])) rep[g] = h;
    if (rep[g] == g) simulated += static_cast<std::uint32_t>(groups_[g].size());
  }
  std::vector<Time> finish(n_, Time::zero());
  LinkClaims& claims = LinkClaims::of(network_);
  for (std::size_t h = 0; h < groups_.size(); ++h) {
    if (rep[h] != h) continue;
    const ModelRun run = run_model(groups_[h]);
    path_.private_events += run.events;
    for (std::size_t g = h; g < groups_.size(); ++g) {
      if (rep[g] != h) continue;
      const bool self = g == h;
      for (std::size_t i = 0; i < groups_[h].size(); ++i)
        for (std::uint32_t r = 0; r < n_; ++r) {
          const std::uint32_t to = self ? r : maps[g].position[i][r];
          finish[to] = max(finish[to], run.done[i][r]);
        }
      for (std::size_t m = 0; m < run.real_link.size(); ++m) {
        const LinkId l = self ? run.real_link[m] : maps[g].link.at(run.real_link[m]);
        network_.add_use(l, run.use[m], run.busy_until[m]);
        claims.end_at(l, run.busy_until[m]);  // nothing of the tree crosses it after
      }
      messages_sent_ += run.messages;
      for (std::size_t k = 0; k < bytes_by_kind_.size(); ++k) bytes_by_kind_[k] += run.bytes[k];
    }
  }
  path_.simulated = simulated;
  path_.folded = simulated < channels_.size();
  path_.reason = path_.folded ? std::string_view() : "its channel groups' leaves send in different orders";
  mode_ = Mode::Folded;
  for (std::uint32_t r = 0; r < n_; ++r) {
    RankProgress& rs = rank_[r];
    rs.finish = max(max(rs.finish, finish[r]), queue_.now());
    queue_.schedule_at(rs.finish, *this, (std::uint64_t{0xffffffffu} << 32) | r);
  }
}

void TreeCollective::finish_folded_rank(std::uint32_t rank) {
  RankProgress& rs = rank_[rank];
  rs.done = true;
  rs.receives_left = 0;
  rs.sends_left = 0;
  if (++ranks_done_ == n_) release_links(n_);
  if (done_handler_ != nullptr) done_handler_->on_event(done_tag_base_ + rank);
}

}  // namespace hybridsim::sim
