// Rings that share links, folded together: the planner (sim/fast/ring_embedding.h; sim/README.md,
// "Embedding rings that share links"). The embedded rings themselves are sim/fast/embedded_ring.h.
#include "sim/fast/ring_embedding.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "sim/error.h"
#include "sim/fast/embedded_ring.h"
#include "sim/fast/folded_ring.h"
#include "sim/fast/link_claims.h"
#include "sim/hash.h"

namespace hybridsim::sim {

namespace {

constexpr LinkId kNoLink = std::numeric_limits<LinkId>::max();

// Rings whose channels have the same orders and routes (the buckets of one data-parallel ring).
// `index`: where each stands in the caller's collectives (an embedded one is replaced there).
struct Family {
  std::vector<FoldedRing*> rings;
  std::vector<std::size_t> index;
  const RingCollective& plan() const { return rings.front()->ring(); }
};

using Collectives = std::vector<std::unique_ptr<Collective>>;

// The rings that may embed, told one by one as each is embedded or its component passed over.
struct RingTicks {
  WorkProgress* progress = nullptr;
  std::uint64_t done = 0;
  std::uint64_t total = 0;
  void to(std::uint64_t rings) {
    done = rings;
    work_tick(progress, "embedding its rings", done, total, "rings", 1);  // a ring is milliseconds
  }
};

bool same_plan(const RingCollective& a, const RingCollective& b) {
  if (!same_ring_routes(a, b)) return false;
  for (std::uint32_t c = 0; c < a.channel_count(); ++c)
    if (a.channel_plan(c).order != b.channel_plan(c).order) return false;
  return true;
}

std::uint64_t plan_hash(const RingCollective& r) {
  std::uint64_t h = hash_combine(r.ranks(), r.channel_count());
  for (std::uint32_t c = 0; c < r.channel_count(); ++c)
    for (const auto& route : r.channel_plan(c).routes)
      for (const LinkId l : route) h = hash_combine(h, l);
  return h;
}

// One hop of one position of one channel of a family's plan.
struct Use {
  LinkId link;
  std::uint32_t family;
  std::uint32_t channel;
  std::uint32_t position;
  std::uint32_t hop;
};

// The shortest shift of a channel's positions that keeps every route's links alike hop by hop.
std::uint32_t route_period(const RingChannel& ch, const LinkTable& links) {
  const auto n = static_cast<std::uint32_t>(ch.routes.size());
  const auto same = [&](std::uint32_t p, std::uint32_t q) {
    return same_route_timing(ch.routes[p], ch.routes[q], links);
  };
  return smallest_period(n, same);
}

// The link standing for each link a component's families use, under the shift by one window, or an
// empty vector if the component is not symmetric under it. A link only one position uses stands
// for itself in the first window; a shared link's class is its orbit under the shift, which must
// carry it to one link whichever of its uses says where, and be of exactly `windows` links (a class
// of fewer would carry more traffic than the one link standing for it); the smallest stands for it.
// `window[f][c]`: by how many positions family f's channel c moves. `uses` is sorted by link.
std::vector<LinkId> link_classes(const std::vector<Use>& uses, const std::vector<Family>& families,
                                 const std::vector<std::vector<std::uint32_t>>& window,
                                 const LinkTable& links, std::uint32_t windows) {
  std::vector<std::uint32_t> count(links.size(), 0);
  for (const Use& u : uses) ++count[u.link];
  std::vector<LinkId> image(links.size(), kNoLink);
  std::vector<LinkId> rep(links.size(), kNoLink);
  for (const Use& u : uses) {
    const RingChannel& ch = families[u.family].plan().channel_plan(u.channel);
    const auto n = static_cast<std::uint32_t>(ch.routes.size());
    const LinkId next = ch.routes[(u.position + window[u.family][u.channel]) % n][u.hop];
    if (!same_timing(links[u.link], links[next])) return {};
    if (count[u.link] == 1) {
      if (count[next] != 1) return {};
      rep[u.link] = ch.routes[u.position % window[u.family][u.channel]][u.hop];
      continue;
    }
    if (image[u.link] != kNoLink && image[u.link] != next) return {};
    image[u.link] = next;
  }
  for (const Use& u : uses) {  // ascending links: the first of a class met is its smallest
    if (rep[u.link] != kNoLink) continue;
    LinkId l = u.link;
    for (std::uint32_t k = 0; k < windows; ++k) {
      if (rep[l] != kNoLink || image[l] == kNoLink) return {};
      rep[l] = u.link;
      l = image[l];
    }
    if (l != u.link) return {};
  }
  return rep;
}

// Each group's segments jump together over periodic steps, live on the step's queue, where they may;
// the smaller chunks' ghosts apart (their own network), with a period of theirs. Each passes over
// the events of every ring it never meets: the other kind's, and every other group's (their links
// are not its own, or the groups would be one). `jumping`: the groups of one family (with two,
// hybrid mp 4 on DGX-1, a jump moved the step off the full simulation's,
// tests/scale/shipped_fast_path_test.cpp, not yet understood).
void attach_jumps(const EmbedPlan& plan, const std::vector<std::uint8_t>& jumping, Network& network) {
  LinkClaims& claims = LinkClaims::of(network);
  for (std::size_t i = 0; i < plan.groups.size(); ++i) {
    if (jumping[i] == 0) continue;
    EmbeddedRingGroup& group = *plan.groups[i];
    for (const bool g : {false, true}) {
      if (group.segments(g).empty()) continue;
      RingJumpScope scope;
      scope.rings = group.segments(g);
      scope.leaders = group.leaders(g);
      scope.links = group.simulated_links();
      scope.shared_queue = true;
      scope.beside = group.segments(!g);
      for (std::size_t j = 0; j < plan.groups.size(); ++j)
        for (const bool h : {false, true})
          if (j != i) scope.beside.insert(scope.beside.end(), plan.groups[j]->segments(h).begin(),
                                          plan.groups[j]->segments(h).end());
      // The real rings pass over the whole ghost network (nothing there reaches their links); the
      // ghosts over the real models' messages only, as the others meet them on the way (mirrored).
      scope.beside_network = g ? nullptr : plan.ghost.get();
      scope.carrier = g ? &network : nullptr;
      scope.guard = &claims;
      auto jump = std::make_unique<RingJump>(std::move(scope));
      if (!jump->applies()) continue;
      jump->attach();
      group.add_jump(std::move(jump));
      for (EmbeddedRing* ring : group.rings()) ring->set_jumping();
    }
  }
}

// Embeds one component (families coupled through shared links) in `windows` windows, if it is
// symmetric under the shift by one. Returns the number of rings embedded (0 if not).
std::uint32_t embed_in_windows(const std::vector<std::uint32_t>& members, std::vector<Family>& families,
                               const std::vector<Use>& uses, Network& network, std::uint32_t windows,
                               Collectives& collectives, EmbedPlan& plan, RingTicks& ticks) {
  const LinkTable& links = network.links();
  std::vector<std::vector<std::uint32_t>> window(families.size());
  bool bounded = false;
  for (const std::uint32_t f : members) {
    const RingCollective& first = families[f].plan();
    window[f].assign(first.channel_count(), first.ranks() / windows);
    for (const FoldedRing* folded : families[f].rings) {
      const RingCollective* ring = &folded->ring();
      if (!ring->uniform_chunks()) {
        if (ring->config().fast_path != FastPath::Bounded) return 0;
        bounded = true;
      }
      for (std::uint32_t c = 0; c < ring->channel_count(); ++c)
        for (std::uint32_t p = 0; p < ring->ranks(); ++p)
          if (ring->step_delay(c, p) != ring->step_delay(c, (p + window[f][c]) % ring->ranks())) return 0;
    }
  }
  const std::vector<LinkId> rep = link_classes(uses, families, window, links, windows);
  if (rep.empty()) return 0;
  LinkClaims& claims = LinkClaims::of(network);
  std::vector<LinkId> claimed;
  std::vector<std::pair<LinkId, LinkId>> copies;
  for (const Use& u : uses) {
    if (!claimed.empty() && claimed.back() == u.link) continue;
    if (claims.holder(u.link) != nullptr) return 0;
    claimed.push_back(u.link);
    if (rep[u.link] != u.link) copies.emplace_back(rep[u.link], u.link);
  }
  std::uint32_t rings = 0;
  for (const std::uint32_t f : members) rings += static_cast<std::uint32_t>(families[f].rings.size());
  if (bounded && plan.ghost == nullptr)
    plan.ghost = std::make_unique<Network>(network.queue(), links, network.switching());
  auto group = std::make_unique<EmbeddedRingGroup>(network, rings, claimed, std::move(copies));
  for (const LinkId l : claimed) claims.claim(l, group.get());
  for (const std::uint32_t f : members) {
    const RingCollective& first = families[f].plan();
    RingEmbedding e;
    e.group = group.get();
    e.window = window[f];
    e.ghost = bounded ? plan.ghost.get() : nullptr;  // every ring of the group, so ghosts share links too
    for (std::uint32_t c = 0; c < first.channel_count(); ++c) {
      std::vector<std::vector<LinkId>> routes;
      for (std::uint32_t q = 0; q < window[f][c]; ++q) {
        std::vector<LinkId> route;
        for (const LinkId l : first.channel_plan(c).routes[q]) route.push_back(rep[l]);
        routes.push_back(std::move(route));
      }
      e.routes.push_back(std::move(routes));
    }
    for (std::size_t k = 0; k < families[f].rings.size(); ++k) {
      auto ring = std::make_unique<EmbeddedRing>(families[f].rings[k]->take_ring(), e);
      group->add_ring(*ring);
      collectives[families[f].index[k]] = std::move(ring);
      ticks.to(ticks.done + 1);
    }
  }
  plan.groups.push_back(std::move(group));
  plan.bounded = plan.bounded || bounded;
  return rings;
}

// Embeds a component in as many windows as it is symmetric for (most first), if at least two.
std::uint32_t embed_component(const std::vector<std::uint32_t>& members, std::vector<Family>& families,
                              const std::vector<Use>& all_uses, Network& network, Collectives& collectives,
                              EmbedPlan& plan, RingTicks& ticks) {
  // Every family and channel repeats, link kinds and speeds alike, after n / windows positions.
  std::uint32_t windows = 0;
  for (const std::uint32_t f : members) {
    const RingCollective& ring = families[f].plan();
    for (std::uint32_t c = 0; c < ring.channel_count(); ++c)
      windows = std::gcd(windows, ring.ranks() / route_period(ring.channel_plan(c), network.links()));
  }
  std::vector<Use> uses;
  for (const Use& u : all_uses)
    if (std::find(members.begin(), members.end(), u.family) != members.end()) uses.push_back(u);
  // The links may repeat only every few windows (a fabric's switches): try fewer, larger windows.
  for (std::uint32_t k = windows; k >= 2; --k)
    if (windows % k == 0)
      if (const std::uint32_t rings =
              embed_in_windows(members, families, uses, network, k, collectives, plan, ticks))
        return rings;
  return 0;
}

}  // namespace

std::vector<LinkId> EmbeddedRingGroup::simulated_links() const {
  std::vector<LinkId> copied;
  for (const auto& copy : copies_) copied.push_back(copy.second);
  std::sort(copied.begin(), copied.end());
  std::vector<LinkId> out;
  for (const LinkId l : links_)
    if (!std::binary_search(copied.begin(), copied.end(), l)) out.push_back(l);
  return out;
}

void EmbeddedRingGroup::add_ring(EmbeddedRing& ring) {
  rings_.push_back(&ring);
  for (const bool g : {false, true}) ring.append_segments(g, segments_[g], leaders_[g]);
}

void EmbedPlan::expect_interruptions(std::uint64_t events) const {
  for (const auto& group : groups) {
    if (!group->jumps()) continue;
    const std::uint64_t n = group->rings().size();
    for (EmbeddedRing* ring : group->rings()) ring->expect_interruptions((events + n - 1) / n);
  }
}

void EmbeddedRingGroup::on_event(std::uint64_t) {
  if (rings_left_ == 0 || --rings_left_ > 0) return;
  for (const auto& [from, to] : copies_)
    network_.add_use(to, network_.counters(from), network_.busy_until(from));
  LinkClaims& claims = LinkClaims::of(network_);
  for (const LinkId l : links_) claims.release(l, this);
}

// Families of rings with one plan, in the order of their first ring.
std::vector<Family> ring_families(Collectives& collectives, WorkProgress* progress) {
  std::vector<Family> families;
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> by_hash;
  // Before the rings are embedded, three passes over every route of every ring (hashed and compared,
  // listed, sorted by link): a few tenths of a second at 65,536 GPUs, told ring by ring, channel by
  // channel, and the sort as one part, so that no line waits on them (issue 31).
  const std::size_t n = collectives.size();
  for (std::size_t i = 0; i < n; ++i) {
    auto* ring = dynamic_cast<FoldedRing*>(collectives[i].get());
    work_tick(progress, "matching its rings' plans", i, n, "collectives",
              ring != nullptr ? 1 : kWorkTickEvery);
    if (ring == nullptr || !ring->may_embed()) continue;
    auto& candidates = by_hash[plan_hash(ring->ring())];
    bool placed = false;
    for (const std::uint32_t f : candidates)
      if (same_plan(families[f].plan(), ring->ring())) {
        families[f].rings.push_back(ring);
        families[f].index.push_back(i);
        placed = true;
        break;
      }
    if (placed) continue;
    candidates.push_back(static_cast<std::uint32_t>(families.size()));
    families.push_back({{ring}, {i}});
  }
  work_tick(progress, "matching its rings' plans", n, n, "collectives");
  return families;
}

EmbedPlan embed_coupled_rings(Collectives& collectives, Network& network, WorkProgress* progress) {
  EmbedPlan plan;
  std::vector<Family> families = ring_families(collectives, progress);
  std::uint64_t channels = 0, listed = 0;
  for (const Family& family : families) channels += family.plan().channel_count();
  std::vector<Use> uses;
  for (std::uint32_t f = 0; f < families.size(); ++f) {
    const RingCollective& ring = families[f].plan();
    for (std::uint32_t c = 0; c < ring.channel_count(); ++c, ++listed) {
      work_tick(progress, "listing its rings' links", listed, channels, "ring channels", 1);
      for (std::uint32_t p = 0; p < ring.ranks(); ++p) {
        const auto& route = ring.channel_plan(c).routes[p];
        for (std::uint32_t i = 0; i < route.size(); ++i) uses.push_back({route[i], f, c, p, i});
      }
    }
  }
  work_tick(progress, "listing its rings' links", channels, channels, "ring channels", 1);
  work_part(progress, "sorting its rings' links", [&] {
    std::sort(uses.begin(), uses.end(), [](const Use& a, const Use& b) {
      return a.link != b.link ? a.link < b.link : a.family < b.family;
    });
  });
  // Components: families joined by a link two of them use.
  std::vector<std::uint32_t> parent(families.size());
  std::iota(parent.begin(), parent.end(), 0u);
  const auto root = [&parent](std::uint32_t f) {
    while (parent[f] != f) f = parent[f] = parent[parent[f]];
    return f;
  };
  for (std::size_t i = 1; i < uses.size(); ++i)
    if (uses[i].link == uses[i - 1].link) parent[root(uses[i].family)] = root(uses[i - 1].family);
  std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> components;
  std::vector<std::uint32_t> order;  // components in the order of their first family
  for (std::uint32_t f = 0; f < families.size(); ++f) {
    auto& members = components[root(f)];
    if (members.empty()) order.push_back(root(f));
    members.push_back(f);
  }
  // A family alone folds by itself (sim/fast/folded_ring.cpp) unless two of its own edges share a link.
  std::vector<std::uint8_t> self_shared(families.size(), 0);
  for (std::size_t i = 1; i < uses.size(); ++i)
    if (uses[i].link == uses[i - 1].link) self_shared[uses[i].family] = 1;
  std::vector<std::uint8_t> jumping;  // per group: of one family
  RingTicks ticks{progress};
  for (const Family& family : families) ticks.total += family.rings.size();
  work_tick(progress, "embedding its rings", 0, ticks.total, "rings");
  for (const std::uint32_t c : order) {
    const std::vector<std::uint32_t>& members = components[c];
    std::uint64_t after = ticks.done;
    for (const std::uint32_t f : members) after += families[f].rings.size();
    if (members.size() < 2 && self_shared[members.front()] == 0) {
      ticks.done = after;  // folds alone: told with the next ring embedded
      continue;
    }
    plan.rings += embed_component(members, families, uses, network, collectives, plan, ticks);
    if (ticks.done != after) ticks.to(after);  // passed over (or embedded in part, which it is not)
    jumping.resize(plan.groups.size(), members.size() == 1 ? 1 : 0);
  }
  ticks.to(ticks.total);
  attach_jumps(plan, jumping, network);
  return plan;
}

}  // namespace hybridsim::sim
