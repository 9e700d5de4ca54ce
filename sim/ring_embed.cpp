// Rings that share links, folded together (sim/ring_embed.h; sim/README.md, "Embedding rings that
// share links"). The planner, then the embedded ring's side of RingCollective.
#include "sim/ring_embed.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "sim/error.h"
#include "sim/fast/link_claims.h"
#include "sim/hash.h"

namespace hybridsim::sim {

namespace {

constexpr LinkId kNoLink = std::numeric_limits<LinkId>::max();

// Rings whose channels have the same orders and routes (the buckets of one data-parallel ring).
struct Family {
  std::vector<RingCollective*> rings;
};

bool same_plan(const RingCollective& a, const RingCollective& b) {
  if (a.ranks() != b.ranks() || a.channel_count() != b.channel_count()) return false;
  for (std::uint32_t c = 0; c < a.channel_count(); ++c) {
    const RingChannel& x = a.channel_plan(c);
    const RingChannel& y = b.channel_plan(c);
    if (x.order != y.order || x.routes != y.routes) return false;
  }
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
    const auto& a = ch.routes[p];
    const auto& b = ch.routes[q];
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!same_timing(links[a[i]], links[b[i]])) return false;
    return true;
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
    const RingChannel& ch = families[u.family].rings.front()->channel_plan(u.channel);
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

// Embeds one component (families coupled through shared links) in `windows` windows, if it is
// symmetric under the shift by one. Returns the number of rings embedded (0 if not).
std::uint32_t embed_in_windows(const std::vector<std::uint32_t>& members, std::vector<Family>& families,
                               const std::vector<Use>& uses, Network& network, std::uint32_t windows,
                               EmbedPlan& plan) {
  const LinkTable& links = network.links();
  std::vector<std::vector<std::uint32_t>> window(families.size());
  bool bounded = false;
  for (const std::uint32_t f : members) {
    const RingCollective& first = *families[f].rings.front();
    window[f].assign(first.channel_count(), first.ranks() / windows);
    for (const RingCollective* ring : families[f].rings) {
      if (!ring->uniform_chunks()) {
        if (ring->fast_path() != FastPath::Bounded) return 0;
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
    const RingCollective& first = *families[f].rings.front();
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
    for (RingCollective* ring : families[f].rings) ring->embed(e);
  }
  plan.groups.push_back(std::move(group));
  plan.bounded = plan.bounded || bounded;
  return rings;
}

// Embeds a component in as many windows as it is symmetric for (most first), if at least two.
std::uint32_t embed_component(const std::vector<std::uint32_t>& members, std::vector<Family>& families,
                              const std::vector<Use>& all_uses, Network& network, EmbedPlan& plan) {
  // Every family and channel repeats, link kinds and speeds alike, after n / windows positions.
  std::uint32_t windows = 0;
  for (const std::uint32_t f : members) {
    const RingCollective& ring = *families[f].rings.front();
    for (std::uint32_t c = 0; c < ring.channel_count(); ++c)
      windows = std::gcd(windows, ring.ranks() / route_period(ring.channel_plan(c), network.links()));
  }
  std::vector<Use> uses;
  for (const Use& u : all_uses)
    if (std::find(members.begin(), members.end(), u.family) != members.end()) uses.push_back(u);
  // The links may repeat only every few windows (a fabric's switches): try fewer, larger windows.
  for (std::uint32_t k = windows; k >= 2; --k)
    if (windows % k == 0)
      if (const std::uint32_t rings = embed_in_windows(members, families, uses, network, k, plan))
        return rings;
  return 0;
}

}  // namespace

void EmbeddedRingGroup::on_event(std::uint64_t) {
  if (rings_left_ == 0 || --rings_left_ > 0) return;
  for (const auto& [from, to] : copies_)
    network_.add_use(to, network_.counters(from), network_.busy_until(from));
  LinkClaims& claims = LinkClaims::of(network_);
  for (const LinkId l : links_) claims.release(l, this);
}

EmbedPlan embed_coupled_rings(const std::vector<RingCollective*>& rings, Network& network) {
  EmbedPlan plan;
  // Families of rings with one plan.
  std::vector<Family> families;
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> by_hash;
  for (RingCollective* ring : rings) {
    if (ring == nullptr || !ring->may_embed()) continue;
    auto& candidates = by_hash[plan_hash(*ring)];
    bool placed = false;
    for (const std::uint32_t f : candidates)
      if (same_plan(*families[f].rings.front(), *ring)) {
        families[f].rings.push_back(ring);
        placed = true;
        break;
      }
    if (placed) continue;
    candidates.push_back(static_cast<std::uint32_t>(families.size()));
    families.push_back({{ring}});
  }
  std::vector<Use> uses;
  for (std::uint32_t f = 0; f < families.size(); ++f) {
    const RingCollective& ring = *families[f].rings.front();
    for (std::uint32_t c = 0; c < ring.channel_count(); ++c)
      for (std::uint32_t p = 0; p < ring.ranks(); ++p) {
        const auto& route = ring.channel_plan(c).routes[p];
        for (std::uint32_t i = 0; i < route.size(); ++i) uses.push_back({route[i], f, c, p, i});
      }
  }
  std::sort(uses.begin(), uses.end(), [](const Use& a, const Use& b) {
    return a.link != b.link ? a.link < b.link : a.family < b.family;
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
  // A family alone folds by itself (sim/ring_fold.cpp) unless two of its own edges share a link.
  std::vector<std::uint8_t> self_shared(families.size(), 0);
  for (std::size_t i = 1; i < uses.size(); ++i)
    if (uses[i].link == uses[i - 1].link) self_shared[uses[i].family] = 1;
  for (const std::uint32_t c : order) {
    const std::vector<std::uint32_t>& members = components[c];
    if (members.size() < 2 && self_shared[members.front()] == 0) continue;
    plan.rings += embed_component(members, families, uses, network, plan);
  }
  return plan;
}

// The embedded ring --------------------------------------------------------------------------

bool RingCollective::may_embed() const {
  return may_fold() && !decided_ && config_.observer == nullptr && network_.observer() == nullptr;
}

bool RingCollective::uniform_chunks() const {
  for (const auto& ch : channels_)
    if (std::adjacent_find(ch.chunk_bytes.begin(), ch.chunk_bytes.end(), std::not_equal_to<>()) !=
        ch.chunk_bytes.end())
      return false;
  return true;
}

void RingCollective::embed(RingEmbedding e) {
  if (!may_embed() || e.group == nullptr || e.window.size() != channels_.size() ||
      e.routes.size() != channels_.size())
    throw InternalError("a ring is embedded once, before it starts, with a window per channel");
  decided_ = true;
  mode_ = Mode::Embedded;
  group_ = e.group;
  path_.simulated = 0;
  for (std::uint32_t c = 0; c < channels_.size(); ++c) {
    ChannelState& ch = channels_[c];
    const std::uint32_t w = e.window[c];
    if (w == 0 || w >= n_ || n_ % w != 0 || e.routes[c].size() != w)
      throw InternalError("an embedded ring's window must divide it");
    const auto [small, large] = std::minmax_element(ch.chunk_bytes.begin(), ch.chunk_bytes.end());
    std::vector<RingChannel> plans(1);
    for (std::uint32_t q = 0; q < w; ++q) plans[0].order.push_back(q);
    plans[0].routes = std::move(e.routes[c]);
    CollectiveConfig config = config_;
    config.fast_path = FastPath::Off;
    const std::uint64_t tags = std::uint64_t{c} * n_;
    if (*small != *large && e.ghost == nullptr)
      throw InternalError("an embedded ring of unequal chunks needs a ghost network");
    if (e.ghost != nullptr) {
      ghosts_.push_back(std::make_unique<RingCollective>(
          *e.ghost, op_, w, plans, size_, config,
          RingFoldModel{n_, messages_per_chunk_, std::vector<std::int64_t>(w, *small), false, nullptr}));
      ghosts_.back()->notify_rank_done_at_once(*this, (std::uint64_t{0xfffffffdu} << 32) | tags);
    } else {
      ghosts_.emplace_back();
    }
    models_.push_back(std::make_unique<RingCollective>(
        network_, op_, w, std::move(plans), size_, config,
        RingFoldModel{n_, messages_per_chunk_, std::vector<std::int64_t>(w, *large), false, e.group}));
    models_.back()->notify_rank_done_at_once(*this, (std::uint64_t{0xfffffffeu} << 32) | tags);
    class_done_.emplace_back(w, 0);
    upper_finish_.emplace_back(w, Time::zero());
    lower_finish_.emplace_back(w, Time::zero());
    fill_edge_bytes(ch);
    messages_sent_ += static_cast<std::uint64_t>(n_) * steps_ * messages_per_chunk_;
    path_.simulated = std::max(path_.simulated, w);
  }
  channels_done_.assign(n_, 0);
  path_.folded = true;
  path_.reason = uniform_chunks() ? std::string_view() : "bounded: chunks of unequal size";
  path_.unit = "ring positions, with the rings sharing its links";
}

void RingCollective::join_embedded(std::uint32_t rank) {
  bool late = false;
  for (std::uint32_t c = 0; c < channels_.size(); ++c) {
    const std::uint32_t p = channels_[c].position_of_rank[rank];
    const auto w = static_cast<std::uint32_t>(class_done_[c].size());
    if (p < w) {
      models_[c]->start(p);
      if (ghosts_[c] != nullptr) ghosts_[c]->start(p);
    } else if (class_done_[c][p % w] != 0) {
      late = true;
      rank_[rank].finish = max(rank_[rank].finish, upper_finish_[c][p % w]);
      ++channels_done_[rank];
    }
  }
  // It repeats a position that finished before it joined: the symmetry did not hold.
  if (late) LinkClaims::of(network_).mark_interfered();
  if (channels_done_[rank] == channels_.size()) finish_embedded_rank(rank);
  if (++joined_ < n_) return;
  // Each position repeats the one a window before it only if it joined at the same time.
  for (std::uint32_t c = 0; c < channels_.size(); ++c) {
    const RingChannel& plan = channels_[c].plan;
    const auto w = static_cast<std::uint32_t>(class_done_[c].size());
    for (std::uint32_t p = w; p < n_; ++p)
      if (rank_[plan.order[p]].start != rank_[plan.order[p % w]].start) {
        LinkClaims::of(network_).mark_interfered();
        return;
      }
  }
}

void RingCollective::ghost_rank_done(std::uint32_t c, std::uint32_t q) {
  lower_finish_[c][q] = ghosts_[c]->rank_finish_time(q);
}

bool RingCollective::embedded_bound_holds() {
  // As a folded ring's (ring_fold.cpp): every time is a max of sums of service times, each growing
  // with its message's bytes; the ghosts of every ring of the group share the ghost network's
  // links as the rings share the real ones, and start when they do.
  Time lead, span;
  for (std::uint32_t c = 0; c < models_.size(); ++c) {
    if (ghosts_[c] == nullptr) continue;
    if (!ghosts_[c]->is_done()) return false;
    for (std::uint32_t q = 0; q < upper_finish_[c].size(); ++q) {
      const Time upper = upper_finish_[c][q];
      const Time lower = lower_finish_[c][q];
      lead = max(lead, max(upper, lower) - min(upper, lower));
      span = max(span, lower - rank_[channels_[c].plan.order[q]].start);
    }
  }
  path_.bound = lead;
  return lead.ps() * 1000 <= span.ps();
}

// Called within the model's event that completes position q (notify_rank_done_at_once): each rank
// at a position it stands for is told then, and its done scheduled at its finish, as in full.
void RingCollective::model_rank_done(std::uint32_t c, std::uint32_t q) {
  class_done_[c][q] = 1;
  const Time finish = models_[c]->rank_finish_time(q);
  upper_finish_[c][q] = finish;
  const auto w = static_cast<std::uint32_t>(class_done_[c].size());
  for (std::uint32_t p = q; p < n_; p += w) {
    const std::uint32_t r = channels_[c].plan.order[p];
    if (!rank_[r].started) continue;
    rank_[r].finish = max(rank_[r].finish, finish);
    if (++channels_done_[r] == channels_.size()) finish_embedded_rank(r);
  }
}

void RingCollective::finish_embedded_rank(std::uint32_t rank) {
  RankProgress& rs = rank_[rank];
  rs.done = true;
  rs.receives_left = 0;
  rs.sends_left = 0;
  rs.finish = max(rs.finish, queue_.now());
  if (done_handler_ != nullptr) queue_.schedule_at(rs.finish, *done_handler_, done_tag_base_ + rank);
  if (++ranks_done_ == n_) group_->on_event(0);
}

}  // namespace hybridsim::sim
