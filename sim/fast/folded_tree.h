// sim::FoldedTree — a tree collective whose alike channel groups are simulated once (sim/README.md,
// "Trees: alike channel groups simulated once"). It holds the plan as a plain TreeCollective, which
// it falls back to. At the first join it asks whether folding may apply (refusal(): a query that
// claims nothing); if so it claims the tree's links (sim/fast/link_claims.h) and holds every join
// back until just before the first message is due: if every rank joined at one time by then, one
// group of each kind runs on a queue and links of its own (a TreeSegment) and its result is copied
// to the groups it stands for; if not, the held joins go to the plain tree as they happened.
//   auto tree = make_tree_collective(network, n, trees, size, config);  // sim/fast/fast_path.h
#pragma once
#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "sim/fast/tree_model.h"
#include "sim/tree_collective.h"

namespace hybridsim::sim {

// Channel group b of a FoldedTree in terms of group a: position[i][r] is the rank at a's channel i
// rank r's place in b's channel i; link maps a's links to b's (one to one; back the other way),
// indexed by link (kNoLink where a does not use it).
struct TreeCorrespondence {
  static constexpr LinkId kNoLink = 0xffffffffu;
  std::vector<std::vector<std::uint32_t>> position;
  std::vector<LinkId> link;
  std::vector<LinkId> back;
  std::vector<LinkId> linked;  // the links set in `link` (and their images in `back`), to clear
  // Set: also require the leaves to send in the same order, the ranks joining in this order.
  const std::vector<std::uint32_t>* leaves_joined = nullptr;
  std::vector<std::uint32_t> order;  // b's channels in the order that corresponds to a's
};

// Which of a FoldedTree's channel groups stand for which: rep[g] is g itself (simulated) or the
// first earlier group g corresponds to, by maps[g].
struct TreeGroupFold {
  std::vector<std::size_t> rep;
  std::vector<TreeCorrespondence> maps;
  std::uint32_t simulated = 0;  // channels of the groups simulated
};

class FoldedTree;

// The uniform trees of one folded step so far (CollectiveConfig::uniform_trees): their groups'
// model runs, which a later tree over the same channels, bytes, timing and join order repeats,
// shifted in time (its links start free, so the run does not depend on when it starts). With
// threads > 1, the first tree to fold has the runs its step's other trees will need (if they join
// in its order) computed ahead on threads - 1 workers (sim/README.md, "Trees in a step: the second
// core").
struct UniformTrees {
  struct Run {
    const TreeChannel* plan = nullptr;  // the group's first channel
    std::vector<std::int64_t> channel_bytes;
    std::uint32_t messages = 0;
    ProtocolTiming timing;
    std::vector<std::uint32_t> join_order;
    Time joined;
    TreeModelRun run;
    std::optional<std::size_t> ahead;  // still with `runner`, under this id
    bool used = false;                 // its events counted (by the first tree to use it)
  };
  // A plan's channel groups (FoldedTree::channel_groups), by its plans.
  struct Groups {
    const void* plans = nullptr;
    std::vector<std::vector<std::uint32_t>> groups;
  };
  // Which groups stood for which in an earlier tree over the same channels, bytes, timing and join
  // order (what correspondence depends on), so that a later such tree does not match them again.
  struct Fold {
    const TreeChannel* plan = nullptr;  // the tree's first channel
    std::vector<std::int64_t> channel_bytes;
    ProtocolTiming timing;
    std::vector<std::uint32_t> join_order;
    TreeGroupFold groups;
  };
  std::vector<Run> runs;
  std::deque<Fold> folds;  // a deque: a fold in use stays put as later trees' are added
  std::vector<Groups> groups;
  std::vector<FoldedTree*> members;  // the step's trees that share these, in the order built
  unsigned threads = 1;              // for the model runs, this one's included
  std::unique_ptr<AheadRuns> runner;  // once a tree first has runs computed ahead
};

class FoldedTree final : public Collective {
 public:
  FoldedTree(Network& network, std::uint32_t ranks, std::shared_ptr<const std::vector<TreeChannel>> channels,
             Bytes size, CollectiveConfig config);
  FoldedTree(const FoldedTree&) = delete;
  FoldedTree& operator=(const FoldedTree&) = delete;
  ~FoldedTree() override;

  // Ranks (of one channel) a set-up loop visits between two ticks: each costs well under a
  // microsecond, so a tick is due every millisecond or so and costs nothing a benchmark sees.
  static constexpr std::uint32_t kSetupTickRanks = 1024;
  // Why it would be simulated in full if it started now, or null. Claims nothing, schedules nothing.
  const char* refusal();
  // refusal()'s reason where its links are not free as its first message is due: what a folded
  // step's estimate that foresees that (analysis/step/fold_forecast.h) says the run would.
  const char* busy_refusal() const {
    return uniform_ != nullptr ? "its links are still busy"
                               : "its links are still busy or held by another folded collective";
  }

  void notify_rank_done(EventHandler& handler, std::uint64_t tag_base) override;
  void start(std::uint32_t rank) override;
  std::uint32_t ranks() const override { return n_; }
  bool is_done() const override { return folded_ ? ranks_done_ == n_ : tree_->is_done(); }
  Time rank_finish_time(std::uint32_t rank) const override {
    return folded_ ? rank_[rank].finish : tree_->rank_finish_time(rank);
  }
  Time finish_time() const override { return folded_ ? latest_finish(rank_) : tree_->finish_time(); }
  std::uint64_t messages_sent() const override { return folded_ ? messages_ : tree_->messages_sent(); }
  std::array<Bytes, kLinkKindCount> bytes_by_link_kind() const override {
    return folded_ ? bytes_ : tree_->bytes_by_link_kind();
  }
  SimulationPath simulation_path() const override { return folded_ ? path_ : tree_->simulation_path(); }
  SimulationCost full_cost() const override { return tree_->full_cost(); }
  // Whether it may fold, from its plan alone: its models are charged as they run, and the plain tree
  // its full cost as it starts, if the fold is refused then. Without it a step counted every folded
  // tree in full among what is sure to run (analysis/step/step_estimate.h) and checked that against
  // its cap before its first event, besides its models' charges: GNMT's step on 256 DGX-1 GPUs under
  // communication.algorithm auto, 3.1 M events of trees checked where its models ran 0.9 M.
  bool may_fold() const override;
  // Its groups' models' events: the channels of the groups that no earlier group stands for, each
  // channel's share of the full cost (what its model is charged); in full where refusal() would
  // refuse from the plan alone; none for a uniform tree that repeats an earlier one's runs.
  ExpectedEvents expected_events() const override;
  // The decision, just before the first message is due, or a folded rank's finish.
  void on_event(std::uint64_t tag) override;

 private:
  using Correspondence = TreeCorrespondence;
  static bool is_leaf(const TreeChannel& t, std::uint32_t r) {
    return t.children[r].empty() && t.parent[r] >= 0;
  }
  using ModelRun = TreeModelRun;
  // In the set-up's loops over ranks (channel groups, their correspondence, the links' claims: 15 s
  // without a line at 65,536 GPUs of DGX-1 under load), at every kSetupTickRanks-th `unit`: the
  // collective's model progress (CollectiveConfig::model_progress; none: nothing) is told.
  void setup_tick(std::uint64_t unit) const;
  // The claims are the plain tree's: its messages (after a fall back) are its own party.
  const EventHandler* claimant() const { return tree_.get(); }
  Time first_message_lead() const;
  bool links_free(Time first_send) const;
  void claim_links();
  void release_links(std::uint32_t rank);  // of the routes into and out of `rank`; every rank's if n_
  std::vector<std::vector<std::uint32_t>> channel_groups() const;
  bool correspond(const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b,
                  Correspondence& map) const;
  bool leaves_send_alike(const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b,
                         const Correspondence& map) const;
  TreeModelInput model_input(const std::vector<std::uint32_t>& group) const;  // as this tree joined
  ModelRun run_model(const std::vector<std::uint32_t>& group) const;
  // Channels `group`'s share of the tree's full cost (TreeCollective::channel_cost): what a model of
  // them runs, message by message.
  SimulationCost group_cost(const std::vector<std::uint32_t>& group) const;
  void charge(const std::vector<std::uint32_t>& group) const;  // group_cost() to the budget, if any
  // Whether an earlier of the step's uniform trees has its plans, bytes, messages and timing: its
  // model runs are that one's again (repeat_or_run), if its ranks join in the same order.
  bool repeats_an_earlier_uniform_tree() const;
  ModelRun repeat_or_run(std::size_t h);   // a uniform tree's earlier run of group h, or a new one
  // What a run of `tree`'s `group` is known by, if its ranks join in this tree's order, now.
  UniformTrees::Run run_key(const FoldedTree& tree, const std::vector<std::uint32_t>& group) const;
  UniformTrees::Run* find_run(const UniformTrees::Run& key) const;  // the uniform trees' run, or null
  const std::vector<std::vector<std::uint32_t>>& uniform_groups(const FoldedTree& tree) const;
  void run_ahead();  // the step's other trees' runs, on the uniform trees' workers
  void go_full();
  // Which of `groups` (this tree's) stand for which, the ranks joining in `join_order`.
  TreeGroupFold fold_groups(const std::vector<std::vector<std::uint32_t>>& groups,
                            const std::vector<std::uint32_t>& join_order) const;
  const TreeGroupFold& repeat_or_fold(TreeGroupFold& mine);  // a uniform tree's earlier fold, or mine
  // A uniform tree's fold of `tree`'s groups if its ranks join in this tree's order (kept for it).
  const TreeGroupFold& uniform_fold(const FoldedTree& tree);
  void run_folded();
  void apply_run(std::size_t h, const TreeGroupFold& fold, std::vector<Time>& finish);
  void finish_folded_rank(std::uint32_t rank);
  void make_uniform(std::vector<Time>& finish);

  std::unique_ptr<TreeCollective> tree_;
  Network& network_;
  EventQueue& queue_;
  std::uint32_t n_;
  bool decided_ = false;   // at the first join
  bool deferred_ = false;  // joins held back until the decision
  bool folded_ = false;    // every rank joined at once and the result was applied
  // Bounded, for a folded step (sim/README.md, "Trees in a step: bounded"), when the config names
  // the step's uniform trees (CollectiveConfig::uniform_trees, which outlive this): when every rank
  // joins at one time, every rank finishes when the last one would; simulation_path().bound is the
  // spread of the ranks' finishes this hides (what earlier such trees hid from this one's joins,
  // the step carries: analysis/step/step_bound.h).
  // Groups need not correspond (each is simulated).
  UniformTrees* uniform_;
  std::vector<RankProgress> rank_;
  std::vector<std::uint32_t> join_order_;
  std::vector<std::vector<std::uint32_t>> groups_;  // channel groups, found by refusal()
  std::uint32_t ranks_done_ = 0;
  std::uint64_t messages_ = 0;
  std::array<Bytes, kLinkKindCount> bytes_{};
  SimulationPath path_;
  EventHandler* done_handler_ = nullptr;
  std::uint64_t done_tag_base_ = 0;
};

}  // namespace hybridsim::sim
