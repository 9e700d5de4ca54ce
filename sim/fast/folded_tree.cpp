// Folding a tree collective onto the representatives of its equivalent channels (sim/README.md,
// "Trees"; sim/fast/folded_tree.h). Inside one tree no two positions are alike: every position has
// its own path from the root, and a parent's messages to its children leave one after the other
// over its NIC, so every child sees its own times. But the channels of a tree collective repeat:
// tree channels that share links form a group (the two trees of a ring channel share its chain and
// NIC), and two groups whose positions correspond one to one (the same routes link by link, the same
// delays and bytes, the same links shared in the same way, and leaves that send in the same order)
// take the same timeline. So one group of each kind is simulated, message by message, on a queue
// and links of their own, and its result (each position's last activity, each link's use) is copied
// to the groups it stands for. Exact when every rank joins at one time and nothing else crosses the
// links while the tree runs; otherwise the plain tree runs (or the caller runs again in full).
#include "sim/fast/folded_tree.h"

#include <algorithm>
#include <string>

#include "sim/error.h"
#include "sim/fast/link_claims.h"
#include "sim/fast/rank_starter.h"

namespace hybridsim::sim {

namespace {

// The decision's tag (a folded rank's finish is tagged with its rank).
constexpr std::uint64_t kDecision = std::uint64_t{0xfffffffeu} << 32;

}  // namespace

FoldedTree::FoldedTree(Network& network, std::uint32_t ranks,
                       std::shared_ptr<const std::vector<TreeChannel>> channels, Bytes size,
                       CollectiveConfig config)
    : tree_(std::make_unique<TreeCollective>(network, ranks, std::move(channels), size, config)),
      network_(network),
      queue_(network.queue()),
      n_(ranks),
      uniform_(config.uniform_trees),
      rank_(ranks) {}

Time FoldedTree::first_message_lead() const {
  // How long after a rank joins its first message can enter a link: the protocol's base latency and
  // the least delay of a leaf's send (only leaves send before they have received).
  Time least = Time::max();
  for (std::uint32_t c = 0; c < tree_->channel_count(); ++c)
    for (std::uint32_t r = 0; r < n_; ++r)
      if (is_leaf(tree_->channel_plan(c), r)) least = min(least, tree_->up_delay(c, r));
  const Time base = tree_->config().timing.base_latency;
  return least == Time::max() ? base : base + least;
}

const char* FoldedTree::refusal() {
  if (tree_->config().fast_path == FastPath::Off) return "fast path off";
  if (network_.observer() != nullptr) return "a trace records every message";
  if (n_ < 2) return "a single rank";
  // The fold is decided just before the first message is due; with no delay before it, that
  // is when the first rank joins.
  const Time lead = first_message_lead();
  if (lead <= Time::zero()) return "a tree without protocol latency";
  groups_ = channel_groups();
  if (uniform_ != nullptr) return links_free(queue_.now() + lead) ? nullptr : "its links are still busy";
  if (groups_.size() < 2) return "a tree whose channels all share links";
  bool alike = false;
  Correspondence map;
  for (std::size_t g = 1; g < groups_.size() && !alike; ++g)
    for (std::size_t h = 0; h < g && !alike; ++h) alike = correspond(groups_[h], groups_[g], map);
  if (!alike) return "a tree whose channel groups differ";
  if (!links_free(queue_.now() + lead))
    return "its links are still busy or held by another folded collective";
  return nullptr;
}

ExpectedEvents FoldedTree::expected_events() const {
  const SimulationCost full = tree_->full_cost();
  if (tree_->config().fast_path == FastPath::Off || n_ < 2 || first_message_lead() <= Time::zero())
    return {.queue = full.events};
  // fold_groups() without the leaves' order (the joins are not known yet): all simulated when every
  // group differs, as refusal() then runs the tree in full.
  const std::vector<std::vector<std::uint32_t>> groups = channel_groups();
  std::vector<std::size_t> simulated_groups;
  std::uint64_t simulated = 0;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    Correspondence map;
    const bool repeats = std::any_of(simulated_groups.begin(), simulated_groups.end(),
                                     [&](std::size_t h) { return correspond(groups[h], groups[g], map); });
    if (repeats) continue;
    simulated_groups.push_back(g);
    simulated += groups[g].size();
  }
  if (simulated == tree_->channel_count()) return {.queue = full.events};
  return {.models = full.events / tree_->channel_count() * simulated};
}

bool FoldedTree::links_free(Time first_send) const {
  // Each link must be free of anything else by the time the first message can reach it.
  const LinkClaims* claims = LinkClaims::find(network_);
  auto free = [&](const std::vector<LinkId>& route) {
    for (const LinkId l : route) {
      const EventHandler* owner = claims == nullptr ? nullptr : claims->holder(l);
      if (owner != nullptr && owner != claimant() && claims->end(l) >= first_send) return false;
      if (network_.busy_until(l) > first_send) return false;
    }
    return true;
  };
  for (std::uint32_t c = 0; c < tree_->channel_count(); ++c) {
    const TreeChannel& t = tree_->channel_plan(c);
    for (std::uint32_t r = 0; r < n_; ++r) {
      if (!free(t.up[r])) return false;
      for (const auto& route : t.down[r])
        if (!free(route)) return false;
    }
  }
  return true;
}

void FoldedTree::claim_links() {
  LinkClaims& claims = LinkClaims::of(network_);
  for (std::uint32_t c = 0; c < tree_->channel_count(); ++c) {
    const TreeChannel& t = tree_->channel_plan(c);
    for (std::uint32_t r = 0; r < n_; ++r) {
      for (const LinkId l : t.up[r]) claims.claim(l, claimant());
      for (const auto& route : t.down[r])
        for (const LinkId l : route) claims.claim(l, claimant());
    }
  }
}

void FoldedTree::release_links(std::uint32_t rank) {
  LinkClaims& claims = LinkClaims::of(network_);
  auto release = [&](const std::vector<LinkId>& route) {
    for (const LinkId l : route) claims.release(l, claimant());
  };
  for (std::uint32_t c = 0; c < tree_->channel_count(); ++c) {
    const TreeChannel* plan = &tree_->channel_plan(c);
    const std::uint32_t first = rank == n_ ? 0 : rank;
    const std::uint32_t last = rank == n_ ? n_ : rank + 1;
    for (std::uint32_t r = first; r < last; ++r) {
      release(plan->up[r]);
      for (const auto& route : plan->down[r]) release(route);
      if (rank == n_) continue;  // every route is some rank's way out
      for (const std::uint32_t child : plan->children[r]) release(plan->up[child]);
      if (const std::int32_t p = plan->parent[r]; p >= 0)
        release(plan->down[static_cast<std::size_t>(p)][tree_->slot_in_parent(c, r)]);
    }
  }
}

FoldedTree::ModelRun FoldedTree::run_model(const std::vector<std::uint32_t>& group) const {
  // The model shares the tree's plans and runs over a network of every link, of which only the
  // group's carry anything: no plan is copied, no link renumbered. Its use is read off the group's
  // links, each once, in the order they are first used.
  ModelRun out;
  std::vector<std::uint8_t> seen(network_.links().size(), 0);
  auto note = [&](const std::vector<LinkId>& route) {
    for (const LinkId l : route)
      if (seen[l] == 0) {
        seen[l] = 1;
        out.real_link.push_back(l);
      }
  };
  TreeSegment segment{tree_->messages_per_channel(), {}, group};
  for (const std::uint32_t c : group) {
    const TreeChannel& t = tree_->channel_plan(c);
    for (std::uint32_t r = 0; r < n_; ++r) {
      note(t.up[r]);
      for (const auto& route : t.down[r]) note(route);
    }
    segment.channel_bytes.push_back(tree_->channel_bytes(c));
  }
  EventQueue queue;
  Network network(queue, network_.links(), network_.switching());
  CollectiveConfig config = tree_->config();
  config.fast_path = FastPath::Off;
  config.observer = nullptr;
  config.uniform_trees = nullptr;
  TreeCollective model(network, n_, tree_->plans(), Bytes::of(0), config, std::move(segment));
  RankStarter starter(model);
  for (const std::uint32_t r : join_order_) queue.schedule_at(rank_[r].start, starter, r);
  queue.run();
  if (!model.is_done()) throw InternalError("a folded tree's model did not finish");
  out.done.resize(group.size());
  for (std::uint32_t i = 0; i < group.size(); ++i)
    for (std::uint32_t r = 0; r < n_; ++r) out.done[i].push_back(model.node_done(i, r));
  for (const LinkId l : out.real_link) {
    out.use.push_back(network.counters(l));
    out.busy_until.push_back(network.busy_until(l));
  }
  out.events = queue.events_processed() - n_;  // the starters stand for the real ranks' joins
  out.messages = model.messages_sent();
  out.bytes = model.bytes_by_link_kind();
  return out;
}

void FoldedTree::notify_rank_done(EventHandler& handler, std::uint64_t tag_base) {
  done_handler_ = &handler;
  done_tag_base_ = tag_base;
  tree_->notify_rank_done(handler, tag_base);
}

void FoldedTree::start(std::uint32_t rank) {
  if (!decided_) {
    decided_ = true;
    tree_->charge_budget();  // before the first message (sim/budget.h), folded or not
    // Folding defers every send until it is decided, just before the first message is due.
    if (const char* why = refusal(); why != nullptr) {
      tree_->explain(why);
    } else {
      claim_links();
      queue_.schedule_at(queue_.now() + first_message_lead() - Time::ps(1), *this, kDecision);
      deferred_ = true;
    }
  }
  if (!deferred_) {
    tree_->start(rank);
    return;
  }
  RankProgress& rs = rank_[rank];
  if (rs.started) throw InternalError("rank " + std::to_string(rank) + " started twice");
  rs.started = true;
  rs.start = queue_.now();
  rs.finish = rs.start;
  if (join_order_.empty() || rs.start == rank_[join_order_.front()].start) {
    join_order_.push_back(rank);
    if (join_order_.size() == n_) run_folded();
    return;
  }
  go_full();
  tree_->start(rank);
}

void FoldedTree::on_event(std::uint64_t tag) {
  if (tag != kDecision)
    finish_folded_rank(static_cast<std::uint32_t>(tag));
  else if (deferred_)
    go_full();  // not every rank has joined: the tree runs in full
}

void FoldedTree::go_full() {
  deferred_ = false;
  tree_->explain("ranks joined at different times");
  // The claims end once the first messages are under way: what crosses the links before then
  // could have met them, so it still marks the network interfered.
  const Time first_send = rank_[join_order_.front()].start + first_message_lead();
  LinkClaims& claims = LinkClaims::of(network_);
  const auto end = [&](const std::vector<LinkId>& route) {
    for (const LinkId l : route)
      if (claims.holder(l) == claimant()) claims.end_at(l, first_send + Time::ps(1));
  };
  for (std::uint32_t c = 0; c < tree_->channel_count(); ++c)
    for (std::uint32_t r = 0; r < n_; ++r) {
      end(tree_->channel_plan(c).up[r]);
      for (const auto& route : tree_->channel_plan(c).down[r]) end(route);
    }
  // The ranks that joined send as they would have when they joined (their messages are not due yet).
  for (const std::uint32_t r : join_order_) tree_->start_at(r, rank_[r].start);
}

TreeGroupFold FoldedTree::fold_groups() const {
  // Each group stands for itself or for the first earlier group it corresponds to.
  TreeGroupFold out;
  out.rep.resize(groups_.size());
  out.maps.resize(groups_.size());
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    out.rep[g] = g;
    out.maps[g].with_leaves = true;
    for (std::size_t h = 0; h < g && out.rep[g] == g; ++h)
      if (out.rep[h] == h && correspond(groups_[h], groups_[g], out.maps[g])) out.rep[g] = h;
    if (out.rep[g] == g) {
      out.simulated += static_cast<std::uint32_t>(groups_[g].size());
      out.maps[g] = {};  // stands for itself: no map
    }
    out.maps[g].back = {};  // only needed while matching
  }
  return out;
}

const TreeGroupFold& FoldedTree::repeat_or_fold(TreeGroupFold& mine) {
  if (uniform_ == nullptr) return mine = fold_groups();
  std::vector<std::int64_t> bytes;
  for (std::uint32_t c = 0; c < tree_->channel_count(); ++c) bytes.push_back(tree_->channel_bytes(c));
  const TreeChannel* plan = &tree_->channel_plan(0);
  const ProtocolTiming& timing = tree_->config().timing;
  for (const UniformTrees::Fold& f : uniform_->folds)
    if (f.plan == plan && f.channel_bytes == bytes && f.timing == timing && f.join_order == join_order_)
      return f.groups;
  uniform_->folds.push_back({plan, std::move(bytes), timing, join_order_, fold_groups()});
  return uniform_->folds.back().groups;
}

void FoldedTree::run_folded() {
  TreeGroupFold mine;
  const TreeGroupFold& fold = repeat_or_fold(mine);
  path_ = tree_->simulation_path();
  std::vector<Time> finish(n_, Time::zero());
  for (std::size_t h = 0; h < groups_.size(); ++h)
    if (fold.rep[h] == h) apply_run(h, fold, finish);
  path_.simulated = fold.simulated;
  path_.folded = fold.simulated < tree_->channel_count();
  path_.reason = path_.folded ? std::string_view() : "its channel groups' leaves send in different orders";
  if (uniform_ != nullptr) make_uniform(finish);
  deferred_ = false;
  folded_ = true;
  for (std::uint32_t r = 0; r < n_; ++r) {
    RankProgress& rs = rank_[r];
    rs.finish = max(max(rs.finish, finish[r]), queue_.now());
    queue_.schedule_at(rs.finish, *this, r);
  }
}

void FoldedTree::apply_run(std::size_t h, const TreeGroupFold& fold, std::vector<Time>& finish) {
  LinkClaims& claims = LinkClaims::of(network_);
  const ModelRun run = repeat_or_run(h);
  path_.private_events += run.events;
  for (std::size_t g = h; g < groups_.size(); ++g) {
    if (fold.rep[g] != h) continue;
    const bool self = g == h;
    const TreeCorrespondence& map = fold.maps[g];
    for (std::size_t i = 0; i < groups_[h].size(); ++i)
      for (std::uint32_t r = 0; r < n_; ++r) {
        const std::uint32_t to = self ? r : map.position[i][r];
        finish[to] = max(finish[to], run.done[i][r]);
      }
    for (std::size_t m = 0; m < run.real_link.size(); ++m) {
      const LinkId l = self ? run.real_link[m] : map.link[run.real_link[m]];
      network_.add_use(l, run.use[m], run.busy_until[m]);
      claims.end_at(l, run.busy_until[m]);  // nothing of the tree crosses it after
    }
    messages_ += run.messages;
    for (std::size_t k = 0; k < bytes_.size(); ++k) bytes_[k] += run.bytes[k];
  }
}

FoldedTree::ModelRun FoldedTree::repeat_or_run(std::size_t h) {
  if (uniform_ == nullptr) return run_model(groups_[h]);
  std::vector<std::int64_t> bytes;
  for (const std::uint32_t c : groups_[h]) bytes.push_back(tree_->channel_bytes(c));
  const TreeChannel* plan = &tree_->channel_plan(groups_[h].front());
  const ProtocolTiming& timing = tree_->config().timing;
  for (const UniformTrees::Run& r : uniform_->runs)
    if (r.plan == plan && r.messages == tree_->messages_per_channel() && r.channel_bytes == bytes &&
        r.timing == timing && r.join_order == join_order_) {
      ModelRun out = r.run;
      const Time shift = queue_.now() - r.joined;
      for (auto& channel : out.done)
        for (Time& t : channel) t += shift;
      for (Time& t : out.busy_until) t += shift;
      out.events = 0;  // nothing simulated again
      return out;
    }
  ModelRun run = run_model(groups_[h]);
  uniform_->runs.push_back({plan, std::move(bytes), tree_->messages_per_channel(), timing, join_order_,
                            queue_.now(), run});
  return run;
}

void FoldedTree::make_uniform(std::vector<Time>& finish) {
  // Every rank joined at one time; the last finish stands for all, within the earliest's lead.
  Time first = Time::max(), last = Time::zero();
  for (std::uint32_t r = 0; r < n_; ++r) {
    const Time f = max(max(rank_[r].start, finish[r]), queue_.now());
    first = min(first, f);
    last = max(last, f);
  }
  std::fill(finish.begin(), finish.end(), last);
  // A rank really joined early by as much as an earlier uniform tree it may have waited on (one
  // not finished before this joined) finished early; otherwise (its stream joined later, for
  // something else) at its time. Finishes are monotone in joins, so the spreads add up.
  Time carried;
  for (const UniformTrees::Finished& f : uniform_->finished)
    if (f.at >= queue_.now()) carried = max(carried, f.early);
  path_.folded = true;
  path_.bound = last - first + carried;
  path_.reason = {};
  uniform_->finished.push_back({last, path_.bound});
}

void FoldedTree::finish_folded_rank(std::uint32_t rank) {
  RankProgress& rs = rank_[rank];
  rs.done = true;
  rs.receives_left = 0;
  rs.sends_left = 0;
  if (++ranks_done_ == n_) release_links(n_);
  if (done_handler_ != nullptr) done_handler_->on_event(done_tag_base_ + rank);
}

}  // namespace hybridsim::sim
