// The hierarchical all-reduce as a chain of ring collectives: intra-node reduce-scatter, inter-node
// all-reduce among same-local-index GPUs, intra-node all-gather.
#include <doctest/doctest.h>

#include "sim/collective_chain.h"

using namespace hybridsim::sim;

namespace {

// 2 nodes × 2 GPUs. Global rank = node * 2 + local. Intra-node links (both directions) 50 GB/s,
// inter-node links between GPUs of the same local index 10 GB/s.
struct TwoByTwo {
  LinkTable links;
  LinkId intra[2][2];  // [node][from local]: local → other local
  LinkId inter[2][2];  // [local][from node]: node → other node
  TwoByTwo() {
    for (int node = 0; node < 2; ++node)
      for (int from = 0; from < 2; ++from)
        intra[node][from] =
            links.add({LinkKind::NVLink, Bandwidth::gb_per_second(50), Time::ns(500), "nv"});
    for (int local = 0; local < 2; ++local)
      for (int from = 0; from < 2; ++from)
        inter[local][from] =
            links.add({LinkKind::InfiniBand, Bandwidth::gb_per_second(10), Time::us(2), "ib"});
  }
  RingChannel node_ring(int node) const {
    return RingChannel{{0, 1}, {{intra[node][0]}, {intra[node][1]}}};
  }
  RingChannel cross_ring(int local) const {
    return RingChannel{{0, 1}, {{inter[local][0]}, {inter[local][1]}}};
  }
  std::vector<CollectiveChain::Part> intra_phase(CollectiveOp op, Bytes size) const {
    return {{{0, 1}, op, {node_ring(0)}, size}, {{2, 3}, op, {node_ring(1)}, size}};
  }
  std::vector<CollectiveChain::Part> inter_phase(Bytes size) const {
    return {{{0, 2}, CollectiveOp::AllReduce, {cross_ring(0)}, size},
            {{1, 3}, CollectiveOp::AllReduce, {cross_ring(1)}, size}};
  }
};

Time run(const TwoByTwo& t, std::vector<std::vector<CollectiveChain::Part>> phases) {
  EventQueue queue;
  Network network(queue, t.links);
  CollectiveChain chain(network, 4, std::move(phases), CollectiveConfig{});
  chain.start_all();
  queue.run();
  CHECK(chain.is_done());
  return chain.finish_time();
}

}  // namespace

TEST_CASE("hierarchical all-reduce takes the sum of its three phases") {
  const TwoByTwo t;
  const Bytes size = Bytes::mib(16);
  const Time rs = run(t, {t.intra_phase(CollectiveOp::ReduceScatter, size)});
  // Each GPU holds S/2 after the intra-node reduce-scatter; that half is all-reduced across nodes.
  const Time ar = run(t, {t.inter_phase(Bytes::mib(8))});
  const Time ag = run(t, {t.intra_phase(CollectiveOp::AllGather, size)});
  const Time all = run(t, {t.intra_phase(CollectiveOp::ReduceScatter, size), t.inter_phase(Bytes::mib(8)),
                           t.intra_phase(CollectiveOp::AllGather, size)});
  // The system is symmetric, so every rank finishes each phase at the same moment and the phases
  // never overlap: the chain's time is exactly the sum.
  CHECK(all == rs + ar + ag);
}

TEST_CASE("a rank absent from a phase skips it") {
  const TwoByTwo t;
  EventQueue queue;
  Network network(queue, t.links);
  // Phase 0 involves only ranks 0 and 1; ranks 2 and 3 have nothing to do and finish at once.
  CollectiveChain chain(network, 4, {{{{0, 1}, CollectiveOp::AllReduce, {t.node_ring(0)}, Bytes::mib(1)}}},
                        CollectiveConfig{});
  chain.start_all();
  queue.run();
  CHECK(chain.is_done());
  CHECK(chain.rank_finish_time(2) == Time::zero());
  CHECK(chain.rank_finish_time(0) > Time::zero());
  CHECK(chain.bytes_by_link_kind()[static_cast<int>(LinkKind::InfiniBand)] == Bytes::of(0));
  // All-reduce of 1 MiB over 2 ranks: each sends 2 chunks of 512 KiB over NVLink.
  CHECK(chain.bytes_by_link_kind()[static_cast<int>(LinkKind::NVLink)] == Bytes::mib(2));
}
