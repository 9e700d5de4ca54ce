#include "analysis/step/step_fold_p2p.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

namespace hybridsim::analysis {

bool is_point_to_point(const workloads::CollectiveSpec& c) {
  return c.op == sim::CollectiveOp::Broadcast && c.members.size() == 2;
}

namespace {

struct Routes {
  const topology::Topology& topology;
  workloads::CommPlanner planner;
  std::vector<int> node;  // per GPU rank

  bool across(const workloads::CollectiveSpec& c) const {
    for (const int m : c.members)
      if (node[static_cast<std::size_t>(m)] != node[static_cast<std::size_t>(c.members.front())]) return true;
    return false;
  }
  // A transfer's route, from its first member to its second (the ring of two's edge that leaves 0).
  const std::vector<sim::LinkId>& p2p(const workloads::CollectiveSpec& c) {
    const sim::RingChannel& ch = planner.ring_channels(c.members).front();
    for (std::size_t i = 0; i < ch.order.size(); ++i)
      if (ch.order[i] == 0) return ch.routes[i];
    return ch.routes.front();
  }
  bool fabric(sim::LinkId l) const {
    const topology::LinkEnds& e = topology.link_ends(l);
    return !topology.device(e.from).node.has_value() && !topology.device(e.to).node.has_value();
  }
};

// Whether two routes time a message alike, link by link.
bool same_shape(const topology::Topology& t, const std::vector<sim::LinkId>& a,
                const std::vector<sim::LinkId>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!sim::same_timing(t.links()[a[i]], t.links()[b[i]]) ||
        t.link_ends(a[i]).count != t.link_ends(b[i]).count)
      return false;
  return true;
}

// Who sends across the fabric: each transfer pair and ring once, with its collectives (for a
// shadow, its representative's), and per fabric link its owners, each once, in the order of their
// first collective.
struct Owner {
  bool ring = false, shadow = false, claimed = false;
  std::size_t rep = 0;  // a shadow pair: its representative pair's owner
  std::vector<std::uint32_t> collectives;
};
struct FabricUse {
  std::vector<Owner> owners;
  // Exact keys (hashes of small GPU numbers collide): a transfer's ordered pair of GPUs (its
  // transfers run one after another on one stream), a ring's members (its buckets likewise).
  std::unordered_map<std::uint64_t, std::size_t> pair_index;
  std::map<std::vector<int>, std::size_t> ring_index;
  std::vector<std::vector<std::size_t>> on;                // [link] → owners
  std::vector<sim::LinkId> image;                          // [link] → its representative link
  static constexpr sim::LinkId kNone = std::numeric_limits<sim::LinkId>::max();

  std::size_t owner(const workloads::CollectiveSpec& spec) {
    const auto key = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(spec.members.front())) << 32) |
                     static_cast<std::uint32_t>(spec.members.back());
    const std::size_t next = owners.size();
    const std::size_t at = is_point_to_point(spec) ? pair_index.try_emplace(key, next).first->second
                                                   : ring_index.try_emplace(spec.members, next).first->second;
    if (at == next) owners.emplace_back();
    return at;
  }
  void claim(Routes& routes, const std::vector<sim::LinkId>& route, std::size_t who) {
    for (const sim::LinkId l : route)
      if (routes.fabric(l) && (on[l].empty() || on[l].back() != who)) on[l].push_back(who);
  }
};

// Told of claim_fabric's work as the members of the rings and transfer pairs whose routes it plans
// (each once; most of its time at 16,384 GPUs), not as collectives: a million repeats of a few
// thousand pairs are looked up in no time, and the first rings' rate said hours. The total is
// counted first on owners of its own.
class PlanTicks {
 public:
  PlanTicks(const workloads::StepProgram& program, Routes& routes, sim::WorkProgress* progress)
      : progress_(progress) {
    if (progress_ == nullptr) return;
    FabricUse counted;
    for (const workloads::CollectiveSpec& spec : program.collectives) {
      if (!routes.across(spec)) continue;
      const std::size_t owners = counted.owners.size();
      if (counted.owner(spec) == owners) total_ += spec.members.size();
    }
    tell();
  }
  // A ring or transfer pair's routes planned.
  void planned(const workloads::CollectiveSpec& spec) {
    done_ += spec.members.size();
    if (done_ >= told_ + sim::kWorkTickEvery) tell();
  }
  void end() {
    done_ = total_;
    tell();
  }

 private:
  void tell() {
    told_ = done_;
    sim::work_tick(progress_, "planning its members' routes", std::min(done_, total_), total_,
                   "GPUs of rings", 1);
  }
  sim::WorkProgress* progress_;
  std::uint64_t total_ = 0, done_ = 0, told_ = 0;
};

// Every cross-machine collective's owner and fabric links; a shadow pair's links mapped onto its
// representative pair's. Why not, where the routes differ or map inconsistently.
std::optional<std::string> claim_fabric(const workloads::StepProgram& program,
                                        const topology::Topology& topology, const StepFoldPlan& plan,
                                        Routes& routes, FabricUse& use, sim::WorkProgress* progress) {
  use.on.resize(topology.links().size());
  use.image.assign(topology.links().size(), FabricUse::kNone);
  PlanTicks ticks(program, routes, progress);
  for (std::size_t c = 0; c < program.collectives.size(); ++c) {
    const workloads::CollectiveSpec& spec = program.collectives[c];
    if (!routes.across(spec)) continue;
    const bool shadow = plan.fold.shadow[c] != 0;
    const std::size_t who = use.owner(spec);
    const bool fresh = !use.owners[who].claimed;
    use.owners[who].claimed = true;
    if (fresh) ticks.planned(spec);
    use.owners[who].collectives.push_back(static_cast<std::uint32_t>(shadow ? plan.shadow_of[c] : c));
    if (!is_point_to_point(spec)) {
      if (!fresh) continue;
      use.owners[who].ring = true;
      for (const sim::RingChannel& ch : routes.planner.ring_channels(spec.members))
        for (const auto& r : ch.routes) use.claim(routes, r, who);
      continue;
    }
    const workloads::CollectiveSpec& theirs = program.collectives[plan.shadow_of[c]];
    const std::size_t rep = shadow ? use.owner(theirs) : who;
    if (!fresh) {
      if (use.owners[who].shadow != shadow || (shadow && use.owners[who].rep != rep))
        return "a pair of members' transfers repeats more than one pair of representatives";
      continue;
    }
    use.owners[who].shadow = shadow;
    use.owners[who].rep = rep;
    const std::vector<sim::LinkId>& mine = routes.p2p(spec);
    use.claim(routes, mine, who);
    if (!shadow) continue;
    const std::vector<sim::LinkId>& image = routes.p2p(theirs);
    if (!is_point_to_point(theirs) || !same_shape(topology, mine, image))
      return "a transfer between members' machines has a route unlike its representative's";
    for (std::size_t i = 0; i < mine.size(); ++i) {
      if (!routes.fabric(mine[i])) continue;
      sim::LinkId& to = use.image[mine[i]];
      if (to != FabricUse::kNone && to != image[i])
        return "members' transfers on one fabric link repeat representatives' on different links";
      to = image[i];
    }
  }
  ticks.end();
  return std::nullopt;
}

// A fabric link with a shadow carries only shadows, of the transfers its image carries, in order.
std::optional<std::string> check_link(const topology::Topology& topology, const FabricUse& use,
                                      sim::LinkId l) {
  std::vector<std::size_t> mine, theirs;
  bool any_shadow = false;
  for (const std::size_t o : use.on[l]) {
    if (use.owners[o].ring) continue;
    any_shadow = any_shadow || use.owners[o].shadow;
    mine.push_back(o);
  }
  if (!any_shadow) return std::nullopt;
  for (const std::size_t o : mine) {
    if (!use.owners[o].shadow)
      return "a transfer between machines shares a fabric link (" + topology.links()[l].name +
             ") with a representative's";
    theirs.push_back(use.owners[o].rep);
  }
  std::vector<std::size_t> there;
  for (const std::size_t o : use.on[use.image[l]])
    if (!use.owners[o].ring) there.push_back(o);
  if (theirs != there)
    return "a transfer between machines shares a fabric link (" + topology.links()[l].name +
           ") unlike its representative's";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> fold_p2p_shadows_exact(const workloads::StepProgram& program,
                                                  const topology::Topology& topology,
                                                  const workloads::CommOptions& comm, StepFoldPlan& plan,
                                                  sim::WorkProgress* progress) {
  if (plan.empty()) return std::nullopt;
  Routes routes{topology, workloads::CommPlanner(topology, comm), {}};
  for (const topology::DeviceId g : topology.gpus())
    routes.node.push_back(topology.device(g).node.value_or(-1));
  bool any = false;
  for (std::size_t c = 0; c < program.collectives.size() && !any; ++c)
    any = plan.fold.shadow[c] != 0 && routes.across(program.collectives[c]);
  if (!any) return std::nullopt;
  FabricUse use;
  if (auto why = claim_fabric(program, topology, plan, routes, use, progress)) return why;
  std::set<std::pair<std::size_t, std::size_t>> apart;  // (ring, transfer pair) owners
  for (sim::LinkId l = 0; l < use.on.size(); ++l) {
    if (use.on[l].size() < 2) continue;
    if (auto why = check_link(topology, use, l)) return why;
    for (const std::size_t r : use.on[l])
      for (const std::size_t t : use.on[l])
        if (use.owners[r].ring && !use.owners[t].ring) apart.insert({r, t});
  }
  plan.kept_apart.clear();
  for (const auto& [r, t] : apart)
    plan.kept_apart.push_back({use.owners[r].collectives, use.owners[t].collectives});
  return std::nullopt;
}

std::optional<std::string> fold_p2p_apart_held(const workloads::StepProgram& program,
                                               const StepFoldPlan& plan, const sim::ExecutionRecord& record) {
  if (plan.kept_apart.empty()) return std::nullopt;
  // Each collective's time: from its first representative rank's start to its last one's end.
  constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
  std::unordered_map<std::uint32_t, std::pair<std::int64_t, std::int64_t>> span;
  for (const auto& [a, b] : plan.kept_apart)
    for (const auto* set : {&a, &b})
      for (const std::uint32_t c : *set) span.try_emplace(c, kNever, -kNever);
  std::uint32_t stream = 0;
  for (std::uint32_t g = 0; g < program.gpus.size(); ++g)
    for (const sim::StreamProgram& sp : program.gpus[g].streams) {
      if (plan.fold.representative[g] == g)
        for (std::uint32_t i = 0; i < sp.tasks.size(); ++i) {
          const sim::Task t = sp.tasks[i];
          if (t.kind != sim::TaskKind::Collective) continue;
          const auto it = span.find(t.id);
          if (it == span.end()) continue;
          it->second.first = std::min(it->second.first, record.reached(stream, i).ps());
          it->second.second = std::max(it->second.second, record.ended(stream, i).ps());
        }
      ++stream;
    }
  const auto over = [&](const std::vector<std::uint32_t>& set) {
    std::pair<std::int64_t, std::int64_t> out{kNever, -kNever};
    for (const std::uint32_t c : set) {
      out.first = std::min(out.first, span.at(c).first);
      out.second = std::max(out.second, span.at(c).second);
    }
    return out;
  };
  for (const auto& [a, b] : plan.kept_apart) {
    const auto x = over(a), y = over(b);
    if (x.first < y.second && y.first < x.second)
      return "a ring and transfers between machines used a fabric link at the same time";
  }
  return std::nullopt;
}

}  // namespace hybridsim::analysis
