#include "analysis/step/step_fold_p2p.h"

#include <unordered_set>
#include <vector>

#include "sim/hash.h"

namespace hybridsim::analysis {

bool is_point_to_point(const workloads::CollectiveSpec& c) {
  return c.op == sim::CollectiveOp::Broadcast && c.members.size() == 2;
}

namespace {

// Who sends across a link: a transfer's ordered GPU pair (its transfers run one after another on
// one stream) or a ring's members (its buckets run one after another), as a hash.
std::uint64_t owner_of(const workloads::CollectiveSpec& c) {
  std::uint64_t h = is_point_to_point(c) ? 1 : 2;
  for (const int m : c.members) h = sim::hash_combine(h, static_cast<std::uint64_t>(m));
  return h;
}

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

}  // namespace

std::optional<std::string> fold_p2p_shadows_exact(const workloads::StepProgram& program,
                                                  const topology::Topology& topology,
                                                  const workloads::CommOptions& comm,
                                                  const StepFoldPlan& plan) {
  if (plan.empty()) return std::nullopt;
  Routes routes{topology, workloads::CommPlanner(topology, comm), {}};
  for (const topology::DeviceId g : topology.gpus())
    routes.node.push_back(topology.device(g).node.value_or(-1));
  bool any = false;
  for (std::size_t c = 0; c < program.collectives.size() && !any; ++c)
    any = plan.fold.shadow[c] != 0 && routes.across(program.collectives[c]);
  if (!any) return std::nullopt;
  // Each fabric link's one owner (0: none yet) among the transfers and rings between machines.
  constexpr std::uint64_t kShared = ~std::uint64_t{0};
  std::vector<std::uint64_t> owner(topology.links().size(), 0);
  std::unordered_set<std::uint64_t> seen;
  std::vector<const std::vector<sim::LinkId>*> transfers;  // the planner's cache keeps them
  const auto claim = [&](const std::vector<sim::LinkId>& route, std::uint64_t who) {
    for (const sim::LinkId l : route)
      if (routes.fabric(l)) owner[l] = owner[l] == 0 || owner[l] == who ? who : kShared;
  };
  for (std::size_t c = 0; c < program.collectives.size(); ++c) {
    const workloads::CollectiveSpec& spec = program.collectives[c];
    if (!routes.across(spec) || !seen.insert(owner_of(spec)).second) continue;
    if (!is_point_to_point(spec)) {
      for (const sim::RingChannel& ch : routes.planner.ring_channels(spec.members))
        for (const auto& r : ch.routes) claim(r, owner_of(spec));
      continue;
    }
    const std::vector<sim::LinkId>& mine = routes.p2p(spec);
    claim(mine, owner_of(spec));
    transfers.push_back(&mine);
    if (plan.fold.shadow[c] == 0) continue;
    const workloads::CollectiveSpec& theirs = program.collectives[plan.shadow_of[c]];
    if (!is_point_to_point(theirs) || !same_shape(topology, mine, routes.p2p(theirs)))
      return "a transfer between members' machines has a route unlike its representative's";
  }
  for (const std::vector<sim::LinkId>* route : transfers)
    for (const sim::LinkId l : *route)
      if (routes.fabric(l) && owner[l] == kShared)
        return "a transfer between machines shares a fabric link (" + topology.links()[l].name +
               ") with other traffic";
  return std::nullopt;
}

}  // namespace hybridsim::analysis
