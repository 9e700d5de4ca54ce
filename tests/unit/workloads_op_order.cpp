// order_ops: the list schedule that orders each GPU's ops, forward along the graph and backward
// along its reverse, with transfer times between GPUs; expected orders derived by hand.
#include <doctest/doctest.h>

#include "tests/unit/toy_profile.h"
#include "workloads/program/op_order.h"

using namespace hybridsim;
using namespace hybridsim::workloads;
using sim::Bytes;
using sim::Time;
using testing::toy_op;
using testing::toy_profile;

using Order = std::vector<std::uint32_t>;

TEST_CASE("op order: one GPU runs a fork's branches by index, backward from the ops without consumers") {
  // s → a, s → b, a → j, b → j. Forward: s; then a and b are ready at once: a (lower index), b; j.
  // Backward (consumers first): j; then a and b, both released by j: a, b; then s.
  Profile p = toy_profile();
  p.ops.push_back(toy_op("s", {}, Time::ms(1), Time::ms(1), Bytes()));
  p.ops.push_back(toy_op("a", {0}, Time::ms(3), Time::ms(1), Bytes()));
  p.ops.push_back(toy_op("b", {0}, Time::ms(1), Time::ms(1), Bytes()));
  p.ops.push_back(toy_op("j", {1, 2}, Time::ms(1), Time::ms(1), Bytes()));
  const OpOrder o = order_ops(p, place_all_on_first(p, 1), sim::Bandwidth());
  CHECK(o.forward == std::vector<Order>{{0, 1, 2, 3}});
  CHECK(o.backward == std::vector<Order>{{3, 1, 2, 0}});
}

TEST_CASE("op order: the time an activation takes to cross GPUs can change what a GPU runs first") {
  // GPU 0: s (0.5 ms). GPU 1: q (1 ms, no inputs), p (reads s), r (reads q); s's activation 25 MB.
  // GPU 1 runs q from 0 to 1 ms; then r is ready at 1 ms, p at 0.5 ms + the transfer.
  //  - transfers ignored: p ready at 0.5 ms, both start at 1 ms, p wins the tie (index 2 < 3);
  //  - at 25 GB/s the 25 MB take 1 ms: p is ready at 1.5 ms, r (ready at 1 ms) goes first.
  Profile p = toy_profile();
  p.ops.push_back(toy_op("s", {}, Time::us(500), Time::ms(1), Bytes(), Bytes::of(25'000'000)));
  p.ops.push_back(toy_op("q", {}, Time::ms(1), Time::ms(1), Bytes()));
  p.ops.push_back(toy_op("p", {0}, Time::ms(1), Time::ms(1), Bytes()));
  p.ops.push_back(toy_op("r", {1}, Time::ms(1), Time::ms(1), Bytes()));
  const MpPlacement pl{2, {0, 1, 1, 1}, "test"};
  CHECK(order_ops(p, pl, sim::Bandwidth()).forward == std::vector<Order>{{0}, {1, 2, 3}});
  CHECK(order_ops(p, pl, sim::Bandwidth::gb_per_second(25)).forward == std::vector<Order>{{0}, {1, 3, 2}});
  // Backward: p, r have no consumers (ready at 0 on GPU 1): p, r; then q (after r). s on GPU 0 waits
  // for p's gradient.
  CHECK(order_ops(p, pl, sim::Bandwidth()).backward == std::vector<Order>{{0}, {2, 3, 1}});
}
