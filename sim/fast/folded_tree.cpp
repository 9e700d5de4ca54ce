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
#include <utility>

#include "sim/error.h"
#include "sim/fast/link_claims.h"
#include "sim/model_progress.h"

namespace hybridsim::sim {

namespace {

// The decision's tag (a folded rank's finish is tagged with its rank).
constexpr std::uint64_t kDecision = std::uint64_t{0xfffffffeu} << 32;

// What a uniform tree's model run of `group` (channels of `t`) depends on besides its ranks' join
// order and time: the group's plans (its first channel's, in the plans the step's trees share), its
// channels' bytes, the messages per channel and the timing.
UniformTrees::Run plan_key(const TreeCollective& t, const std::vector<std::uint32_t>& group) {
  UniformTrees::Run key;
  key.plan = &t.channel_plan(group.front());
  for (const std::uint32_t c : group) key.channel_bytes.push_back(t.channel_bytes(c));
  key.messages = t.messages_per_channel();
  key.timing = t.config().timing;
  return key;
}

// Whether two runs' keys agree on all plan_key() holds: the one test of a run's repeat, which
// find_run() also holds to the join order and repeats_an_earlier_uniform_tree() asks of whole trees.
bool same_run_key(const UniformTrees::Run& a, const UniformTrees::Run& b) {
  return a.plan == b.plan && a.messages == b.messages && a.channel_bytes == b.channel_bytes &&
         a.timing == b.timing;
}

// Every channel of `t`: a whole tree as one group (its plans are shared whole or not at all, so its
// first channel's plan names them).
std::vector<std::uint32_t> all_channels(const TreeCollective& t) {
  std::vector<std::uint32_t> all(t.channel_count());
  for (std::uint32_t c = 0; c < all.size(); ++c) all[c] = c;
  return all;
}

}  // namespace

FoldedTree::FoldedTree(Network& network, std::uint32_t ranks,
                       std::shared_ptr<const std::vector<TreeChannel>> channels, Bytes size,
                       CollectiveConfig config)
    : tree_(std::make_unique<TreeCollective>(network, ranks, std::move(channels), size, config)),
      network_(network),
      queue_(network.queue()),
      n_(ranks),
      uniform_(config.uniform_trees),
      rank_(ranks) {
  if (uniform_ != nullptr) uniform_->members.push_back(this);
}

FoldedTree::~FoldedTree() {
  if (uniform_ == nullptr) return;
  auto& members = uniform_->members;
  std::replace(members.begin(), members.end(), this, static_cast<FoldedTree*>(nullptr));
}

Time FoldedTree::first_message_lead() const {
  // How long after a rank joins its first message can enter a link: the protocol's base latency and
  // the least delay of a leaf's send (only leaves send before they have received).
  Time least = Time::max();
  for (std::uint32_t c = 0; c < tree_->channel_count(); ++c)
    for (std::uint32_t r = 0; r < n_; ++r) {
      setup_tick(r);
      if (is_leaf(tree_->channel_plan(c), r)) least = min(least, tree_->up_delay(c, r));
    }
  const Time base = tree_->config().timing.base_latency;
  return least == Time::max() ? base : base + least;
}

void FoldedTree::setup_tick(std::uint64_t unit) const {
  if (unit % kSetupTickRanks != 0) return;
  if (ModelProgress* progress = tree_->config().model_progress; progress != nullptr) progress->setting_up();
}

const char* FoldedTree::refusal() {
  if (tree_->config().fast_path == FastPath::Off) return "fast path off";
  if (network_.observer() != nullptr) return "a trace records every message";
  if (n_ < 2) return "a single rank";
  // The fold is decided just before the first message is due; with no delay before it, that
  // is when the first rank joins.
  const Time lead = first_message_lead();
  if (lead <= Time::zero()) return "a tree without protocol latency";
  groups_ = uniform_ != nullptr ? uniform_groups(*this) : channel_groups();
  if (uniform_ != nullptr) return links_free(queue_.now() + lead) ? nullptr : busy_refusal();
  if (groups_.size() < 2) return "a tree whose channels all share links";
  bool alike = false;
  Correspondence map;
  for (std::size_t g = 1; g < groups_.size() && !alike; ++g)
    for (std::size_t h = 0; h < g && !alike; ++h) alike = correspond(groups_[h], groups_[g], map);
  if (!alike) return "a tree whose channel groups differ";
  if (!links_free(queue_.now() + lead)) return busy_refusal();
  return nullptr;
}

bool FoldedTree::repeats_an_earlier_uniform_tree() const {
  if (uniform_ == nullptr) return false;
  const UniformTrees::Run mine = plan_key(*tree_, all_channels(*tree_));
  for (const FoldedTree* earlier : uniform_->members) {
    if (earlier == this) return false;
    if (earlier == nullptr) continue;
    const TreeCollective& t = *earlier->tree_;
    if (same_run_key(plan_key(t, all_channels(t)), mine)) return true;
  }
  return false;
}

bool FoldedTree::may_fold() const {
  // refusal()'s checks known before the run: a traced run's trees all run in full, and are counted
  // so up front.
  return tree_->config().fast_path != FastPath::Off && network_.observer() == nullptr && n_ >= 2 &&
         first_message_lead() > Time::zero();
}

ExpectedEvents FoldedTree::expected_events() const {
  const SimulationCost full = tree_->full_cost();
  if (!may_fold()) return {.queue = full.events};
  // A uniform tree over an earlier one's plans, bytes and timing repeats its model runs, shifted in
  // time (repeat_or_run), if its ranks join in the same order, as a step's buckets' do: it runs none.
  // Counted as each ran its own, GNMT's 11 all-reduces over 1,024 DGX-1 GPUs under
  // communication.algorithm auto (6 of them repeats) were estimated at 7.8 M events where 4.0 M ran.
  if (repeats_an_earlier_uniform_tree()) return {.queue = n_};
  // fold_groups() without the leaves' order (the joins are not known yet): all simulated when every
  // group differs, as refusal() then runs the tree in full.
  const std::vector<std::vector<std::uint32_t>> groups = channel_groups();
  std::vector<std::size_t> simulated_groups;
  std::uint64_t simulated = 0, models = 0;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    Correspondence map;
    const bool repeats = std::any_of(simulated_groups.begin(), simulated_groups.end(),
                                     [&](std::size_t h) { return correspond(groups[h], groups[g], map); });
    if (repeats) continue;
    simulated_groups.push_back(g);
    simulated += groups[g].size();
    models += group_cost(groups[g]).events;  // what its model is charged (charge)
  }
  if (simulated == tree_->channel_count() && uniform_ == nullptr) return {.queue = full.events};
  // Each rank's done is an event of the step's queue, as a folded ring's.
  return {.queue = n_, .models = models};
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
      setup_tick(r);
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
      setup_tick(r);
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
      setup_tick(r);
      release(plan->up[r]);
      for (const auto& route : plan->down[r]) release(route);
      if (rank == n_) continue;  // every route is some rank's way out
      for (const std::uint32_t child : plan->children[r]) release(plan->up[child]);
      if (const std::int32_t p = plan->parent[r]; p >= 0)
        release(plan->down[static_cast<std::size_t>(p)][tree_->slot_in_parent(c, r)]);
    }
  }
}

TreeModelInput FoldedTree::model_input(const std::vector<std::uint32_t>& group) const {
  TreeModelInput in{.links = &network_.links(),
                    .switching = network_.switching(),
                    .ranks = n_,
                    .plans = tree_->plans(),
                    .config = tree_->config(),
                    .segment = {tree_->messages_per_channel(), {}, group},
                    .join_order = join_order_,
                    .joined = queue_.now()};
  for (const std::uint32_t c : group) in.segment.channel_bytes.push_back(tree_->channel_bytes(c));
  return in;
}

FoldedTree::ModelRun FoldedTree::run_model(const std::vector<std::uint32_t>& group) const {
  charge(group);
  return run_tree_model(model_input(group));
}

SimulationCost FoldedTree::group_cost(const std::vector<std::uint32_t>& group) const {
  SimulationCost cost;
  for (const std::uint32_t c : group) cost += tree_->channel_cost(c);
  return cost;
}

void FoldedTree::charge(const std::vector<std::uint32_t>& group) const {
  // Before its model runs (or, run ahead on another thread, is first used): charged after, a model
  // over the cap ran to its end before it was refused.
  if (SimulationBudget* budget = tree_->config().budget; budget != nullptr)
    budget->charge(group_cost(group), tree_->budget_cause(group));
}

void FoldedTree::notify_rank_done(EventHandler& handler, std::uint64_t tag_base) {
  done_handler_ = &handler;
  done_tag_base_ = tag_base;
  tree_->notify_rank_done(handler, tag_base);
}

void FoldedTree::start(std::uint32_t rank) {
  if (!decided_) {
    decided_ = true;
    // Only a tree that runs in full charges its full cost, as it starts (TreeCollective::start_at);
    // a folded one charges its model runs (charge). Charged here, folded or not, a folded step's
    // trees were stopped at twice a cap their run stays within (Inception DP 32 on 4 DGX-1 with
    // trees: 145,504 events charged at --max-events 67888 for a run of 61,813).
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
      setup_tick(r);
      end(tree_->channel_plan(c).up[r]);
      for (const auto& route : tree_->channel_plan(c).down[r]) end(route);
    }
  // The ranks that joined send as they would have when they joined (their messages are not due yet).
  for (const std::uint32_t r : join_order_) tree_->start_at(r, rank_[r].start);
}

TreeGroupFold FoldedTree::fold_groups(const std::vector<std::vector<std::uint32_t>>& groups,
                                      const std::vector<std::uint32_t>& join_order) const {
  // Each group stands for itself or for the first earlier group it corresponds to.
  TreeGroupFold out;
  out.rep.resize(groups.size());
  out.maps.resize(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    out.rep[g] = g;
    out.maps[g].leaves_joined = &join_order;
    for (std::size_t h = 0; h < g && out.rep[g] == g; ++h)
      if (out.rep[h] == h && correspond(groups[h], groups[g], out.maps[g])) out.rep[g] = h;
    if (out.rep[g] == g) {
      out.simulated += static_cast<std::uint32_t>(groups[g].size());
      out.maps[g] = {};  // stands for itself: no map
    }
    out.maps[g].back = {};  // only needed while matching
    out.maps[g].leaves_joined = nullptr;
  }
  return out;
}

const TreeGroupFold& FoldedTree::repeat_or_fold(TreeGroupFold& mine) {
  if (uniform_ == nullptr) return mine = fold_groups(groups_, join_order_);
  return uniform_fold(*this);
}

const TreeGroupFold& FoldedTree::uniform_fold(const FoldedTree& tree) {
  const TreeCollective& t = *tree.tree_;
  std::vector<std::int64_t> bytes;
  for (std::uint32_t c = 0; c < t.channel_count(); ++c) bytes.push_back(t.channel_bytes(c));
  const TreeChannel* plan = &t.channel_plan(0);
  const ProtocolTiming& timing = t.config().timing;
  for (const UniformTrees::Fold& f : uniform_->folds)
    if (f.plan == plan && f.channel_bytes == bytes && f.timing == timing && f.join_order == join_order_)
      return f.groups;
  uniform_->folds.push_back(
      {plan, std::move(bytes), timing, join_order_, tree.fold_groups(uniform_groups(tree), join_order_)});
  return uniform_->folds.back().groups;
}

void FoldedTree::run_folded() {
  if (uniform_ != nullptr) run_ahead();
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
  path_.model_in_flight = std::max(path_.model_in_flight, run.most_in_flight);
  for (std::size_t g = h; g < groups_.size(); ++g) {
    if (fold.rep[g] != h) continue;
    const bool self = g == h;
    const TreeCorrespondence& map = fold.maps[g];
    for (std::size_t i = 0; i < groups_[h].size(); ++i)
      for (std::uint32_t r = 0; r < n_; ++r) {
        setup_tick(r);
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
  UniformTrees::Run key = run_key(*this, groups_[h]);
  UniformTrees::Run* r = find_run(key);
  // The first tree to use a run is charged for it, before it runs here or is taken from a worker; a
  // repeat simulates nothing again.
  if (r == nullptr || !r->used) charge(groups_[h]);
  if (r == nullptr) {
    key.run = run_tree_model(model_input(groups_[h]));
    uniform_->runs.push_back(std::move(key));
    r = &uniform_->runs.back();
  } else if (r->ahead) {
    r->run = uniform_->runner->take(*r->ahead, tree_->config().model_progress);
    r->ahead.reset();
  }
  ModelRun out = r->run;
  const Time shift = queue_.now() - r->joined;
  for (auto& channel : out.done)
    for (Time& t : channel) t += shift;
  for (Time& t : out.busy_until) t += shift;
  // The first tree to use a run counts its events, wherever it ran.
  if (r->used) out.events = 0;
  r->used = true;
  return out;
}

UniformTrees::Run FoldedTree::run_key(const FoldedTree& tree, const std::vector<std::uint32_t>& group) const {
  UniformTrees::Run key = plan_key(*tree.tree_, group);
  key.join_order = join_order_;
  key.joined = queue_.now();
  return key;
}

UniformTrees::Run* FoldedTree::find_run(const UniformTrees::Run& key) const {
  for (UniformTrees::Run& r : uniform_->runs)
    if (same_run_key(r, key) && r.join_order == key.join_order) return &r;
  return nullptr;
}

const std::vector<std::vector<std::uint32_t>>& FoldedTree::uniform_groups(const FoldedTree& tree) const {
  // Channel groups depend on the plans and the links alone: the step's trees over one member set
  // share their plans, and find their groups once.
  const void* plans = tree.tree_->plans().get();
  for (const UniformTrees::Groups& g : uniform_->groups)
    if (g.plans == plans) return g.groups;
  uniform_->groups.push_back({plans, tree.channel_groups()});
  return uniform_->groups.back().groups;
}

void FoldedTree::run_ahead() {
  // Speculative: the runs the step's trees not yet started will need if their ranks join in this
  // one's order, in the order those trees were built (a bucket's tree before the next's). This
  // tree's first run not yet known is left to this thread, which needs it at once.
  if (uniform_->threads < 2) return;
  // Runs queued for trees joining in another order than this one's: if this one joined otherwise,
  // so may the trees after it; those not started are dropped, and queued again in this order.
  if (uniform_->runner != nullptr)
    std::erase_if(uniform_->runs, [&](const UniformTrees::Run& r) {
      return r.ahead && r.join_order != join_order_ && uniform_->runner->drop(*r.ahead);
    });
  bool own_first = true;
  for (FoldedTree* tree : uniform_->members) {
    if (tree == nullptr || (tree != this && tree->decided_)) continue;
    // This tree's join order is a permutation of its own ranks: it says nothing of a tree of another
    // size (an expert group's beside the data-parallel one), whose model it would start at ranks it
    // does not have (a Mixtral slice crashed so with two threads).
    if (tree->n_ != n_) continue;
    const auto& groups = uniform_groups(*tree);
    const TreeGroupFold& fold = uniform_fold(*tree);  // the groups it will simulate
    for (std::size_t h = 0; h < groups.size(); ++h) {
      if (fold.rep[h] != h) continue;
      const auto& group = groups[h];
      UniformTrees::Run key = run_key(*tree, group);
      if (find_run(key) != nullptr) continue;
      if (tree == this && std::exchange(own_first, false)) continue;
      if (uniform_->runner == nullptr) uniform_->runner = std::make_unique<AheadRuns>(uniform_->threads - 1);
      TreeModelInput in = tree->model_input(group);
      in.join_order = join_order_;
      key.ahead = uniform_->runner->add(std::move(in));
      uniform_->runs.push_back(std::move(key));
    }
  }
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
  // Its own bound, given its joins; what an earlier bounded collective left late is carried on by
  // the step, through what waited on it (analysis/step/step_bound.h).
  path_.folded = true;
  path_.bound = last - first;
  path_.reason = {};
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
