// sim::AllToAllCollective on a hand-made switch (each rank an up and a down link of Generic kind,
// 10 GB/s and 1 µs: 1000 B take 100 ns on a link): its time against the closed form of an
// uncontended all-to-all, bytes per link, and under contention (two ranks sharing one up link).
#include <doctest/doctest.h>

#include <vector>

#include "sim/collectives/all_to_all.h"
#include "sim/error.h"

using namespace hybridsim;
using namespace hybridsim::sim;

namespace {

struct Switch {
  LinkTable links;
  PairRoutes routes;
  // Rank r sends on up[share ? r / 2 : r] and receives on down[r].
  Switch(std::uint32_t n, bool shared_up) : routes(n, std::vector<std::vector<LinkId>>(n)) {
    std::vector<LinkId> up, down;
    for (std::uint32_t r = 0; r < n; ++r) {
      up.push_back(links.add({LinkKind::Generic, Bandwidth::gb_per_second(10), Time::us(1), "up"}));
      down.push_back(links.add({LinkKind::Generic, Bandwidth::gb_per_second(10), Time::us(1), "down"}));
    }
    for (std::uint32_t i = 0; i < n; ++i)
      for (std::uint32_t j = 0; j < n; ++j)
        if (i != j) routes[i][j] = {up[shared_up ? i / 2 : i], down[j]};
  }
  Time run(std::uint32_t n, Bytes size, CollectiveConfig config, std::uint64_t* messages = nullptr,
           Bytes* generic = nullptr) {
    EventQueue queue;
    Network network(queue, links);
    AllToAllCollective coll(network, n, routes, size, config);
    coll.start_all();
    queue.run();
    CHECK(coll.is_done());
    if (messages) *messages = coll.messages_sent();
    if (generic) *generic = coll.bytes_by_link_kind()[static_cast<std::size_t>(LinkKind::Generic)];
    return coll.finish_time();
  }
};

}  // namespace

TEST_CASE("all-to-all: uncontended, the closed form (n-1)/n of the buffer over the up link plus two hops") {
  // Each rank's up link carries its n-1 parts of S/n back to back; at every moment the ranks send
  // to n distinct peers (rank r's k-th message goes to r+k), so no down link is shared. The last
  // message leaves the up link at (n-1)·S/(n·B) and is delivered two link latencies later.
  for (const std::uint32_t n : {2u, 4u, 8u, 16u}) {
    for (const std::int64_t messages : {1, 4}) {
      CAPTURE(n);
      CAPTURE(messages);
      Switch sw(n, false);
      CollectiveConfig config;
      const Bytes part = Bytes::of(1000 * messages);
      const Bytes size = Bytes::of(part.count() * n);
      config.message_size = Bytes::of(1000);
      std::uint64_t sent = 0;
      Bytes generic;
      const Time t = sw.run(n, size, config, &sent, &generic);
      const Time bandwidth_term = Time::ns(100) * static_cast<std::int64_t>((n - 1) * messages);
      CHECK(t == bandwidth_term + Time::us(2));
      CHECK(sent == std::uint64_t{n} * (n - 1) * messages);
      // Every part crosses two links.
      CHECK(generic == Bytes::of(2 * part.count() * n * (n - 1)));
    }
  }
}

TEST_CASE("all-to-all: two ranks sharing an up link take twice the bandwidth term") {
  // 4 ranks, ranks 0 and 1 on one up link, 2 and 3 on another: each up link carries 2 × 3 parts.
  Switch sw(4, true);
  CollectiveConfig config;
  config.message_size = Bytes::of(1000);
  const Time t = sw.run(4, Bytes::of(4000), config);
  CHECK(t == Time::ns(100) * 6 + Time::us(2));
}

namespace {
struct LateJoin final : EventHandler {
  Collective* coll = nullptr;
  void on_event(std::uint64_t rank) override { coll->start(static_cast<std::uint32_t>(rank)); }
};
}  // namespace

TEST_CASE("all-to-all: a rank that joins late finishes then, routes must be n x n") {
  // Rank 0 sends its 1000 B at once (delivered at 2.1 µs, before rank 1 joined); rank 1 joins at
  // 10 µs: rank 0 is done at 12.1 µs when rank 1's part reaches it, rank 1 at 10 µs... once its own
  // part is delivered (12.1 µs): both at 12.1 µs.
  Switch sw(2, false);
  EventQueue queue;
  Network network(queue, sw.links);
  AllToAllCollective coll(network, 2, sw.routes, Bytes::of(2000), {});
  LateJoin join;
  join.coll = &coll;
  coll.start(0);
  queue.schedule_at(Time::us(10), join, 1);
  queue.run();
  CHECK(coll.is_done());
  CHECK(coll.part_bytes() == Bytes::of(1000));
  CHECK(coll.rank_finish_time(0) == Time::ns(12'100));
  CHECK(coll.rank_finish_time(1) == Time::ns(12'100));
  CHECK_THROWS_AS(AllToAllCollective(network, 3, sw.routes, Bytes::of(3000), {}), InternalError);
}

TEST_CASE("all-to-all: least_cost, known before any route, is full_cost with one-link routes, never more") {
  // The collective command checks least_cost against its caps before finding the n × (n − 1) routes
  // (at 65,536 GPUs their table alone took 17 GB): it must never pass what the collective costs.
  for (const std::uint32_t n : {2u, 5u, 16u}) {
    for (const std::int64_t size : {std::int64_t{0}, std::int64_t{4000}, std::int64_t{1} << 20}) {
      CAPTURE(n);
      CAPTURE(size);
      Switch sw(n, false);
      PairRoutes one_link = sw.routes;
      for (auto& row : one_link)
        for (auto& route : row)
          if (!route.empty()) route.resize(1);
      EventQueue queue;
      Network network(queue, sw.links);
      CollectiveConfig config;
      config.message_size = Bytes::of(1000);
      const SimulationCost least = AllToAllCollective::least_cost(n, Bytes::of(size), config.message_size);
      const SimulationCost one =
          AllToAllCollective(network, n, one_link, Bytes::of(size), config).full_cost();
      CHECK(least.events == one.events);
      CHECK(least.messages == one.messages);
      CHECK(least.state_bytes == one.state_bytes);
      CHECK(least.in_flight == one.in_flight);
      const SimulationCost two =
          AllToAllCollective(network, n, sw.routes, Bytes::of(size), config).full_cost();
      CHECK(least.events <= two.events);
      CHECK(least.state_bytes <= two.state_bytes);
      CHECK(least.memory() <= two.memory());
    }
  }
  // 65,536 GPUs: 4.3e9 pairs, about 8.6e9 events for 1 GiB in 512 KiB messages (one a pair): past
  // the default 2e9 before a route is found.
  const SimulationCost huge = AllToAllCollective::least_cost(65536, Bytes::gib(1), Bytes::kib(512));
  CHECK(huge.messages == 65536ull * 65535ull);
  CHECK(huge.events == 2 * 65536ull * 65535ull);
}
