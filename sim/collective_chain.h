// sim::CollectiveChain — a collective made of phases of smaller ring collectives over subsets of the
// ranks; a rank enters phase k+1 as soon as it has finished its part of phase k. This is how the
// hierarchical all-reduce runs: intra-node reduce-scatter, inter-node all-reduce among GPUs of the
// same local index, intra-node all-gather.
//   std::vector<std::vector<CollectiveChain::Part>> phases = {...};
//   CollectiveChain chain(net, 16, std::move(phases), config);  chain.start_all();
#pragma once
#include <memory>
#include <optional>
#include <vector>

#include "sim/ring_collective.h"

namespace hybridsim::sim {

class CollectiveChain final : public Collective {
 public:
  // One ring collective over `members` (global ranks; the channels' orders use indices into
  // members). A rank may appear in at most one part per phase; a rank absent from a phase skips it.
  struct Part {
    std::vector<std::uint32_t> members;
    CollectiveOp op = CollectiveOp::AllReduce;
    std::vector<RingChannel> channels;
    Bytes size;
    // The part's protocol timing, in place of the chain config's (sim/protocol.h).
    std::optional<ProtocolTiming> timing = {};
  };

  CollectiveChain(Network& network, std::uint32_t ranks, std::vector<std::vector<Part>> phases,
                  CollectiveConfig config);

  void notify_rank_done(EventHandler& handler, std::uint64_t tag_base) override;
  void start(std::uint32_t rank) override;
  std::uint32_t ranks() const override { return n_; }
  bool is_done() const override { return ranks_done_ == n_; }
  Time rank_finish_time(std::uint32_t rank) const override { return finish_[rank]; }
  Time finish_time() const override;
  std::uint64_t messages_sent() const override;
  std::array<Bytes, kLinkKindCount> bytes_by_link_kind() const override;
  // Folded when one of its rings was; the first unfolded ring's reason otherwise.
  SimulationPath simulation_path() const override;
  // Its rings' (sim/collective_cost.cpp); each ring charges the budget itself as it starts.
  SimulationCost full_cost() const override;
  ExpectedEvents expected_events() const override;  // its rings', each the way it will run
  bool may_fold() const override;
  void on_event(std::uint64_t tag) override;

 private:
  struct Slot {  // where a rank sits in one phase
    std::int32_t part = -1;  // index into parts_ (all phases flattened), -1 = skips the phase
    std::uint32_t index = 0; // its rank inside that part
  };
  void enter_phase(std::uint32_t rank, std::size_t phase);

  EventQueue& queue_;
  std::uint32_t n_;
  std::size_t phase_count_;
  std::vector<std::unique_ptr<Collective>> parts_;   // rings, made by sim/fast/fast_path.h
  std::vector<std::vector<std::uint32_t>> members_;  // per part
  std::vector<std::size_t> phase_of_part_;
  std::vector<Slot> slots_;  // [phase * n_ + rank]
  std::vector<Time> finish_;
  std::vector<bool> done_;
  std::uint32_t ranks_done_ = 0;
  EventHandler* done_handler_ = nullptr;
  std::uint64_t done_tag_base_ = 0;
};

}  // namespace hybridsim::sim
