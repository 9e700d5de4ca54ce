// The steps of the PipeDream importer (workloads/import/import_pipedream_detail.h), each on a hand-made
// graph: a data-loading input node 1 feeding the chain 2 → 3 → 4, which forks into 5 and 6, which
// join in 7 (listed out of order: the file's order is not the graph's).
//
//   node  module     fwd ms  bwd ms   params
//   1     Input0     5       0        0
//   2     Conv2d     1.25    0.1      864
//   3     BatchNorm  0.45    0.5      64
//   4     ReLU       0.3     0.9      0
//   5     Conv2d     0.65    1.3      288
//   6     MaxPool    0.255   0.2      0
//   7     Concat     0       0        0
#include <doctest/doctest.h>

#include "sim/error.h"
#include "workloads/import/import_pipedream_detail.h"

using namespace hybridsim;
using namespace hybridsim::workloads::pipedream_detail;
using sim::Bytes;
using sim::Time;
using workloads::PipeDreamGraph;
using workloads::PipeDreamNode;

namespace {

PipeDreamNode node(int id, const std::string& module, std::int64_t fwd_us, std::int64_t bwd_us,
                   std::int64_t params = 0) {
  PipeDreamNode n;
  n.id = id;
  n.module = module;
  n.forward = Time::us(fwd_us);
  n.backward = Time::us(bwd_us);
  n.activation = Bytes::of(100 * id);
  n.parameters = Bytes::of(params);
  n.line = id + 10;
  return n;
}

PipeDreamGraph fork_join() {
  PipeDreamGraph g;
  g.source = "dir/fork_graph.txt";
  g.nodes = {node(4, "ReLU(inplace)", 300, 900),   node(1, "Input0", 5000, 0),
             node(2, "Conv2d(3, 8)", 1250, 100, 864), node(3, "BatchNorm2d(8)", 450, 500, 64),
             node(6, "MaxPool2d(3)", 255, 200),    node(5, "Conv2d(8, 8)", 650, 1300, 288),
             node(7, "Concat(1)", 0, 0)};
  g.edges = {{6, 7}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {4, 6}, {5, 7}};
  return g;
}

// The node ids of indices into g.nodes.
std::vector<int> ids(const PipeDreamGraph& g, const std::vector<std::size_t>& indices) {
  std::vector<int> out;
  for (const auto i : indices) out.push_back(g.nodes[i].id);
  return out;
}

std::string error_of(const PipeDreamGraph& g) {
  std::vector<std::vector<std::size_t>> preds;
  try {
    topological_order(g, index_of_nodes(g), preds);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("pipedream steps: topological_order by node number, preds in edge order, cycles named") {
  const PipeDreamGraph g = fork_join();
  std::vector<std::vector<std::size_t>> preds;
  const auto order = topological_order(g, index_of_nodes(g), preds);
  CHECK(ids(g, order) == std::vector<int>{1, 2, 3, 4, 5, 6, 7});
  // node7 (index 6) reads node6 (edge listed first) and node5.
  CHECK(ids(g, preds[6]) == std::vector<int>{6, 5});
  CHECK(preds[1].empty());  // the input node
  // Ties go to the lower number even when a higher one is listed first: 9 and 8 both ready.
  PipeDreamGraph two;
  two.nodes = {node(9, "A", 1, 1), node(8, "B", 1, 1)};
  std::vector<std::vector<std::size_t>> p2;
  CHECK(ids(two, topological_order(two, index_of_nodes(two), p2)) == std::vector<int>{8, 9});
  // A cycle 2 → 3 → 2 (lines 12 and 13); node1 is outside it.
  PipeDreamGraph cyc;
  cyc.source = "c.txt";
  cyc.nodes = {node(1, "A", 1, 1), node(2, "B", 1, 1), node(3, "C", 1, 1)};
  cyc.edges = {{1, 2}, {2, 3}, {3, 2}};
  CHECK(error_of(cyc) == "c.txt: the edges form a cycle through node2 (line 12), node3 (line 13)");
}

TEST_CASE("pipedream steps: recorded_times drops the input node's time") {
  const PipeDreamGraph g = fork_join();
  workloads::PipeDreamImportReport r;
  const NodeTimes t = recorded_times(g, r);
  CHECK(r.input_nodes == 1);
  CHECK(r.input_time == Time::ms(5));
  CHECK(t.forward[1] == Time::zero());  // node1, the input
  CHECK(t.forward[2] == Time::us(1250));
  // 1.25 + 0.45 + 0.3 + 0.65 + 0.255 + 0 = 2.905 ms forward; 0.1 + 0.5 + 0.9 + 1.3 + 0.2 = 3.0 ms backward.
  CHECK(r.forward_recorded == Time::us(2905));
  CHECK(r.backward_recorded == Time::us(3000));
}

TEST_CASE("pipedream steps: correct_forward removes the overhead down to the floor, never raising") {
  const PipeDreamGraph g = fork_join();
  workloads::PipeDreamImportReport r;
  NodeTimes t = recorded_times(g, r);
  workloads::PipeDreamCorrection c;  // 250 us off, floor 10 us
  c.sync_overhead = Time::us(300);
  correct_forward(g, c, t, r);
  // node2 1250 → 950; node3 450 → 150; node4 300 → 10 (floored, 0 would be below); node6 255 → 10
  // (floored); node5 650 → 350; node7's 0 stays 0 (at or below the floor: untouched).
  CHECK(t.forward[2] == Time::us(950));
  CHECK(t.forward[3] == Time::us(150));
  CHECK(t.forward[0] == Time::us(10));
  CHECK(t.forward[4] == Time::us(10));
  CHECK(t.forward[5] == Time::us(350));
  CHECK(t.forward[6] == Time::zero());
  CHECK(t.forward[1] == Time::zero());  // the input node is never corrected
  CHECK(r.floored == 2);
}

TEST_CASE("pipedream steps: neighbour_runs are maximal one-consumer, one-producer chains") {
  const PipeDreamGraph g = fork_join();
  std::vector<std::vector<std::size_t>> preds;
  const auto order = topological_order(g, index_of_nodes(g), preds);
  const auto runs = neighbour_runs(g, preds, order);
  // 2 → 3 → 4 (node4 forks, node1 is an input and left out); 5 and 6 are alone (7 has two
  // producers), so is 7.
  REQUIRE(runs.size() == 1);
  CHECK(ids(g, runs[0]) == std::vector<int>{2, 3, 4});
}

TEST_CASE("pipedream steps: apportion and redistribute_backward keep each run's total") {
  // 10 ps over weights 1 : 1 : 1: cumulative 3.33 → 3, 6.67 → 6, 10 → parts 3, 3, 4.
  CHECK(apportion(Time::ps(10), {Time::ps(1), Time::ps(1), Time::ps(1)}) ==
        std::vector<Time>{Time::ps(3), Time::ps(3), Time::ps(4)});
  CHECK(apportion(Time::ps(7), {Time::ps(0), Time::ps(2)}) == std::vector<Time>{Time::ps(0), Time::ps(7)});

  const PipeDreamGraph g = fork_join();
  workloads::PipeDreamImportReport r;
  NodeTimes t = recorded_times(g, r);
  // The run 2 → 3 → 4 (indices 2, 3, 0): backward 0.1 + 0.5 + 0.9 = 1.5 ms in proportion to forward
  // 1250 : 450 : 300 (of 2000): 937.5, 337.5, 225 us.
  redistribute_backward({{2, 3, 0}}, t, r);
  CHECK(t.backward[2] == Time::ns(937500));
  CHECK(t.backward[3] == Time::ns(337500));
  CHECK(t.backward[0] == Time::us(225));
  CHECK(r.runs == 1);
  CHECK(r.longest_run == 3);
  // A run without forward time is left as it is and not counted (node6 and node7 with 0 forward).
  NodeTimes z = recorded_times(g, r);
  z.forward[6] = Time::zero();
  z.forward[4] = Time::zero();
  redistribute_backward({{4, 6}}, z, r);
  CHECK(z.backward[4] == Time::us(200));
  CHECK(r.runs == 1);
}

TEST_CASE("pipedream steps: pipedream_ops and pipedream_metadata") {
  const PipeDreamGraph g = fork_join();
  std::vector<std::vector<std::size_t>> preds;
  const auto order = topological_order(g, index_of_nodes(g), preds);
  workloads::PipeDreamImportReport r;
  const NodeTimes t = recorded_times(g, r);
  const auto ops = pipedream_ops(g, order, preds, t, r);
  REQUIRE(ops.size() == 7);
  CHECK(ops[0].name == "node1");
  CHECK(ops[0].forward.empty());  // the input: no kernels
  CHECK(ops[1].forward == std::vector<workloads::Kernel>{{"Conv2d", Time::us(1250)}});
  CHECK(ops[1].backward == std::vector<workloads::Kernel>{{"Conv2d_grad", Time::us(100)}});
  CHECK(ops[1].gradient_bytes == Bytes::of(864));
  CHECK(ops[1].exchange == workloads::GradientExchange::DenseAllReduce);
  CHECK(ops[1].activation_bytes == Bytes::of(200));
  CHECK(ops[6].inputs == std::vector<std::uint32_t>{4, 5});  // node7 reads node5 and node6, sorted
  CHECK(ops[6].forward.empty());                             // Concat's 0 ms: no kernel
  CHECK_FALSE(ops[3].has_gradient());
  CHECK(r.forward == Time::us(2905));
  CHECK(r.backward == Time::us(3000));

  workloads::PipeDreamOptions o{.batch = 16};
  auto m = pipedream_metadata(g, o);
  CHECK(m.network == "fork");
  CHECK(m.batch_per_gpu == 16);
  CHECK(m.units_per_step == 16);
  CHECK(m.source == "PipeDream profiler graph fork_graph.txt");
  CHECK(m.notes.find("times as recorded") != std::string::npos);
  o.correction = workloads::PipeDreamCorrection{};
  o.network = "net";
  m = pipedream_metadata(g, o);
  CHECK(m.network == "net");
  CHECK(m.notes.find(
            "corrected: 250 us synchronization removed per forward module (floor 10 us), backward spread") !=
        std::string::npos);
  CHECK(default_network("a/b/vgg16_graph.txt") == "vgg16");
  CHECK(default_network("_graph.txt") == "pipedream");
}

TEST_CASE("pipedream steps: check_options") {
  auto error = [](const workloads::PipeDreamOptions& o) {
    try {
      check_options(o);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK(error({.batch = 0}) == "--batch must be at least 1");
  CHECK(error({.units_per_step = -1}) == "--units-per-step must be positive");
  // As kineto's (import_units.h): samples are the batch, 8, not 5.
  CHECK(error({.batch = 8, .units_per_step = 5}) ==
        "--units-per-step 5: under --unit samples a step counts its --batch, 8; expected 0 or 8, or the "
        "--unit a "
        "step counts 5 of (tokens, ...)");
  CHECK(error({.batch = 8, .throughput_unit = "tokens", .units_per_step = 5}) == "(no error)");
  workloads::PipeDreamCorrection c;
  c.min_forward = Time::us(-1);
  CHECK(error({.correction = c}) == "--sync-overhead and --min-forward must not be negative");
  CHECK(error({.batch = 8, .correction = workloads::PipeDreamCorrection{}}) == "(no error)");
}
