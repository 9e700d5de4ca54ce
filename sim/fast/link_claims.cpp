#include "sim/fast/link_claims.h"

#include <memory>

#include "sim/error.h"
#include "sim/hash.h"

namespace hybridsim::sim {

LinkClaims::LinkClaims(Network& network) : network_(network), claims_(network.links().size()) {}

LinkClaims& LinkClaims::of(Network& network) {
  if (network.watcher() == nullptr) network.attach_watcher(std::make_unique<LinkClaims>(network));
  auto* claims = dynamic_cast<LinkClaims*>(network.watcher());
  if (claims == nullptr) throw InternalError("the network's arrival watcher is not its link claims");
  return *claims;
}

const LinkClaims* LinkClaims::find(const Network& network) {
  return dynamic_cast<const LinkClaims*>(network.watcher());
}

void LinkClaims::set_holder(LinkId link, const EventHandler* holder) {
  claims_[link].holder = holder;
  network_.watch(link, holder != nullptr);
}

void LinkClaims::claim(LinkId link, const EventHandler* holder) {
  set_holder(link, holder);
  claims_[link].end = Time::max();
}

void LinkClaims::hand_over(LinkId link) {
  Claim& c = claims_[link];
  set_holder(link, c.promised);
  c.promised = nullptr;
  c.end = Time::max();
  c.shared = false;
  c.jumped = Time::zero();
}

void LinkClaims::add_route(const std::vector<LinkId>& route, const void* collective) {
  std::uint64_t h = hash_combine(route.size(), reinterpret_cast<std::uintptr_t>(collective));
  for (const LinkId l : route) h = hash_combine(h, l);
  auto& alike = routes_[h];
  for (const auto& [r, of] : alike)
    if (of == collective && *r == route) {
      alike_.emplace(route.data(), r->data());
      return;
    }
  alike.emplace_back(&route, collective);
}

const LinkId* LinkClaims::same_route(const LinkId* route) const {
  const auto it = alike_.find(route);
  return it == alike_.end() ? route : it->second;
}

void LinkClaims::on_arrival(const LinkArrival& arrival) {
  Claim& c = claims_[arrival.link];
  if (c.holder != arrival.party) {
    if (arrival.time >= c.end) return;
    if (!c.shared || arrival.time == c.last_arrival || arrival.time < c.jumped) mark_interfered();
    c.last_other = arrival.time;
    if (c.shared && ghost_ != nullptr) mirror(arrival);
  } else if (arrival.party != arrival.receiver) {
    if (arrival.time == c.last_other ||
        (arrival.time == c.last_arrival && arrival.route != c.last_route &&
         same_route(arrival.route) != same_route(c.last_route)))
      mark_interfered();
    c.last_arrival = arrival.time;
    c.last_route = arrival.route;
  }
}

void LinkClaims::mark_interfered() {
  interfered_ = true;
  if (stop_when_interfered_) network_.queue().stop();
}

bool LinkClaims::met_since(const std::vector<LinkId>& links, Time since) const {
  for (const LinkId l : links)
    if (claims_[l].last_other != Time::max() && claims_[l].last_other >= since) return true;
  return false;
}

void LinkClaims::mirror(const LinkArrival& arrival) {
  if (one_hop_.empty()) {
    one_hop_.resize(network_.links().size());
    for (LinkId l = 0; l < one_hop_.size(); ++l) one_hop_[l] = l;
  }
  if (ghost_class_.size() <= arrival.rate_class) ghost_class_.resize(arrival.rate_class + 1u, 0);
  std::uint8_t& rate = ghost_class_[arrival.rate_class];
  if (rate == 0)
    rate = static_cast<std::uint8_t>(ghost_->rate_class(network_.class_scale(arrival.rate_class)) + 1);
  ghost_->send_at(arrival.time, Route(&one_hop_[arrival.link], 1), Bytes::of(arrival.bytes), sink_, 0,
                  static_cast<std::uint8_t>(rate - 1), &sink_);
}

bool interfered(const Network& network) {
  const LinkClaims* claims = LinkClaims::find(network);
  return claims != nullptr && claims->interfered();
}

}  // namespace hybridsim::sim
