// Placements on toy profiles: rules (first match wins, errors named), the layers, stacks and
// branches partitioners with their balance derived by hand, and the placement's own sums.
#include <doctest/doctest.h>

#include "sim/error.h"
#include "tests/unit/toy_profile.h"
#include "workloads/program/placement.h"

using namespace hybridsim;
using namespace hybridsim::workloads;
using sim::Bytes;
using sim::Time;
using testing::toy_op;
using testing::toy_profile;

using Gpus = std::vector<std::uint32_t>;

namespace {

// A chain of layers whose forward + backward weights are given (forward = backward = w / 2).
Profile chain_of_layers(const std::vector<std::pair<std::string, int>>& layers_ms) {
  Profile p = toy_profile();
  for (std::size_t i = 0; i < layers_ms.size(); ++i) {
    const Time half = Time::us(500) * layers_ms[i].second;
    std::vector<std::uint32_t> in;
    if (i > 0) in.push_back(static_cast<std::uint32_t>(i - 1));
    p.ops.push_back(toy_op(layers_ms[i].first, in, half, half, Bytes(), Bytes::mib(1)));
  }
  return p;
}

}  // namespace

TEST_CASE("placement rules: the first matching rule wins, on the op's name or its layer") {
  Profile p = toy_profile();
  p.ops.push_back(toy_op("enc.t0", {}, Time::ms(1), Time::ms(1), Bytes(), Bytes::mib(1), "enc"));
  p.ops.push_back(toy_op("dec.t0", {0}, Time::ms(1), Time::ms(1), Bytes(), Bytes::mib(1), "dec"));
  p.ops.push_back(toy_op("head", {1}, Time::ms(1), Time::ms(1), Bytes()));
  const std::vector<PlacementRule> rules = {{"enc", 1, ""}, {"dec*", 2, ""}, {"*", 0, ""}};
  CHECK(place_by_rules(p, 3, rules).gpu_of_op == Gpus{1, 2, 0});
  // An op no rule matches, a rule naming a GPU outside 0..mp-1, a rule shadowed by earlier ones.
  const std::vector<PlacementRule> partial = {{"enc*", 0, ""}};
  CHECK_THROWS_WITH_AS(place_by_rules(p, 2, partial), doctest::Contains("\"dec.t0\""), InputError);
  const std::vector<PlacementRule> outside = {{"*", 2, "s.yaml:3:4: "}};
  CHECK_THROWS_WITH_AS(place_by_rules(p, 2, outside),
                       doctest::Contains("s.yaml:3:4: placement rule \"*\" names GPU 2"), InputError);
  const std::vector<PlacementRule> shadowed = {{"*", 0, ""}, {"head", 1, ""}};
  CHECK_THROWS_WITH_AS(place_by_rules(p, 2, shadowed), doctest::Contains("is shadowed"), InputError);
  CHECK(glob_match("enc.L[0-2]", "enc.L1"));
  CHECK_FALSE(glob_match("enc.L[0-2]", "enc.L3"));
}

TEST_CASE("layers partitioner: contiguous groups that minimize the largest one") {
  // Weights 3, 1, 1, 3 ms. mp 2: {3, 1 | 1, 3} (4 and 4). mp 3: {3 | 1, 1 | 3} (largest 3).
  const Profile p = chain_of_layers({{"a", 3}, {"b", 1}, {"c", 1}, {"d", 3}});
  CHECK(partition_layers(p, 2).gpu_of_op == Gpus{0, 0, 1, 1});
  CHECK(partition_layers(p, 3).gpu_of_op == Gpus{0, 1, 1, 2});
  CHECK(partition_layers(p, 2).compute_per_gpu(p) == std::vector<Time>{Time::ms(4), Time::ms(4)});
  // Every op of a layer stays together: two ops of layer "x" (2 ms each) then "y" (1 ms): mp 2 can
  // only cut between the layers.
  Profile q = toy_profile();
  q.ops.push_back(toy_op("x.t0", {}, Time::ms(1), Time::ms(1), Bytes(), Bytes::mib(1), "x"));
  q.ops.push_back(toy_op("x.t1", {0}, Time::ms(1), Time::ms(1), Bytes(), Bytes::mib(1), "x"));
  q.ops.push_back(toy_op("y", {1}, Time::us(500), Time::us(500), Bytes()));
  CHECK(partition_layers(q, 2).gpu_of_op == Gpus{0, 0, 1});
}

TEST_CASE("stacks partitioner: each stack split by depth, layers outside go next to their inputs") {
  // embedding → enc.L0 → enc.L1 → dec.L0 → dec.L1 → classifier, 2 ms each. enc and dec are each
  // cut into {L0 | L1}; the embedding has no placed input (GPU 0); the classifier reads dec.L1 (GPU 1).
  const Profile p = chain_of_layers(
      {{"embedding", 2}, {"enc.L0", 2}, {"enc.L1", 2}, {"dec.L0", 2}, {"dec.L1", 2}, {"classifier", 2}});
  CHECK(partition_stacks(p, 2).gpu_of_op == Gpus{0, 0, 1, 0, 1, 1});
}

TEST_CASE("branches partitioner: a block's parallel branches spread, longest first, the join by its inputs") {
  // stem → (a1 → a2) and (b1) → join, all in block "blk" but the stem. Branch a weighs 4 ms, b 2 ms:
  // a → GPU 0, b → GPU 1 (least loaded). The join reads a2 (1 MiB) and b1 (2 MiB): GPU 1.
  Profile p = toy_profile();
  p.ops.push_back(toy_op("stem", {}, Time::ms(1), Time::ms(1), Bytes()));
  p.ops.push_back(toy_op("blk.a1", {0}, Time::ms(1), Time::ms(1), Bytes(), Bytes::mib(1), "blk"));
  p.ops.push_back(toy_op("blk.a2", {1}, Time::ms(1), Time::ms(1), Bytes(), Bytes::mib(1), "blk"));
  p.ops.push_back(toy_op("blk.b1", {0}, Time::ms(1), Time::ms(1), Bytes(), Bytes::mib(2), "blk"));
  p.ops.push_back(toy_op("blk.join", {2, 3}, Time::ms(1), Time::ms(1), Bytes(), Bytes::mib(1), "blk"));
  const MpPlacement pl = partition_branches(p, 2);
  CHECK(pl.gpu_of_op == Gpus{0, 0, 0, 1, 1});
  // Crossing activations: stem → b1 (1 MiB) and a2 → join (1 MiB).
  CHECK(pl.cut_bytes(p) == Bytes::mib(2));
}

TEST_CASE("partitioner names and the documented defaults") {
  CHECK(parse_partitioner("stacks") == Partitioner::Stacks);
  CHECK(partitioner_name(Partitioner::Branches) == "branches");
  CHECK_THROWS_AS(parse_partitioner("depth"), InputError);
  Profile p = toy_profile("gnmt");
  CHECK(default_partitioner(p) == Partitioner::Stacks);
  p.meta.network = "inception-v3";
  CHECK(default_partitioner(p) == Partitioner::Branches);
  p.meta.network = "biglstm";
  CHECK(default_partitioner(p) == Partitioner::Layers);
}
