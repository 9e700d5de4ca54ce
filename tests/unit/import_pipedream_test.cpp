// The PipeDream graph importer on a small graph in PipeDream's format (tests/data/pipedream, written
// for these tests): parsing, topological order, edges, the correction, and located errors.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <cstdio>

#include "sim/error.h"
#include "workloads/import/import_pipedream.h"
#include "workloads/profile/profile_io.h"

using namespace hybridsim;
using sim::Bytes;
using sim::Time;
using workloads::import_pipedream;
using workloads::parse_pipedream_graph;

namespace {

std::string tiny_path() { return std::string(HYBRIDSIM_SOURCE_DIR) + "/tests/data/pipedream/tiny_graph.txt"; }

std::string error_of(const std::string& text) {
  try {
    import_pipedream(parse_pipedream_graph(text, "g.txt"), {});
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

const char* kConv = "node2 -- Conv2d(3, 8) -- forward_compute_time=1.250, backward_compute_time=0.100, "
                    "activation_size=8000.000, parameter_size=864.000\n";

}  // namespace

TEST_CASE("pipedream: nodes in any order, edges, topological order by node number") {
  const auto g = workloads::load_pipedream_graph(tiny_path());
  REQUIRE(g.nodes.size() == 8);
  CHECK(g.edges.size() == 8);
  CHECK(g.nodes[0].id == 4);  // file order is kept in the graph
  CHECK(g.nodes[0].line == 1);
  CHECK(g.nodes[0].module_type() == "ReLU");
  CHECK(g.nodes[3].activation == Bytes::of(1000 + 64 + 64));  // LSTM: output, h and c, summed
  CHECK(g.nodes[2].forward == Time::us(1250));
  const auto r = import_pipedream(g, {.batch = 32});
  const auto& p = r.profile;
  REQUIRE(p.ops.size() == 8);
  for (std::size_t i = 0; i < 8; ++i) CHECK(p.ops[i].name == "node" + std::to_string(i + 1));
  // Edges become inputs: node7 (Concat) joins the two branches node5 and node6 of node4.
  CHECK(p.ops[6].inputs == std::vector<std::uint32_t>{4, 5});
  CHECK(p.ops[4].inputs == std::vector<std::uint32_t>{3});
  CHECK(p.ops[0].inputs.empty());
  // The input node reads the batch: no kernels; its 5 ms (loading) are reported, not kept.
  CHECK(p.ops[0].forward.empty());
  CHECK(r.report.input_nodes == 1);
  CHECK(r.report.input_time == Time::ms(5));
  CHECK(p.ops[1].forward == std::vector<workloads::Kernel>{{"Conv2d", Time::us(1250)}});
  CHECK(p.ops[1].backward == std::vector<workloads::Kernel>{{"Conv2d_grad", Time::us(100)}});
  CHECK(p.ops[6].forward.empty());  // Concat recorded 0 ms
  // Parameters are dense all-reduced gradients: 864 + 64 + 288 + 4352 bytes.
  CHECK(p.ops[1].exchange == workloads::GradientExchange::DenseAllReduce);
  CHECK(p.parameter_bytes() == Bytes::of(5568));
  CHECK_FALSE(p.ops[3].has_gradient());
  // As recorded (input left out): forward 1.25+0.45+0.3+0.65+0.255+0+2 = 4.905 ms, backward
  // 0.1+0.5+0.9+1.3+0.2+0+0.02 = 3.02 ms; 32 samples per 7.925 ms step.
  CHECK(p.forward_time() == Time::us(4905));
  CHECK(p.backward_time() == Time::us(3020));
  CHECK(p.meta.network == "tiny");
  CHECK(p.meta.batch_per_gpu == 32);
  CHECK(p.throughput_1gpu() == doctest::Approx(32 / 7.925e-3));
  // The YAML form round-trips.
  CHECK(workloads::parse_profile(workloads::profile_to_yaml(p), "<memory>") == p);
}

TEST_CASE("pipedream: the correction removes forward overhead and spreads backward in runs") {
  const auto g = workloads::load_pipedream_graph(tiny_path());
  const auto r = import_pipedream(g, {.batch = 32, .correction = workloads::PipeDreamCorrection{}});
  const auto& p = r.profile;
  // 0.25 ms off every forward time above the 10 us floor: node2 1.0, node3 0.2, node4 0.05,
  // node5 0.4, node8 1.75 ms; node6 (0.255 ms) stops at the floor, node7's 0 stays 0.
  CHECK(p.ops[1].forward_time() == Time::ms(1));
  CHECK(p.ops[5].forward_time() == Time::us(10));
  CHECK(p.ops[6].forward_time() == Time::zero());
  CHECK(p.ops[7].forward_time() == Time::us(1750));
  CHECK(r.report.floored == 1);
  CHECK(r.report.overhead_removed == Time::us(1495));  // 5 × 250 + 245 us
  CHECK(p.forward_time() == Time::us(3410));
  // Backward total preserved: 3.02 ms.
  CHECK(p.backward_time() == Time::us(3020));
  // Runs of neighbours: node2 → node3 → node4 (node4 forks) and node7 → node8; node5 and node6
  // stand alone. In the first run 1.5 ms of backward spread as forward 1.0 : 0.2 : 0.05.
  CHECK(r.report.runs == 2);
  CHECK(r.report.longest_run == 3);
  CHECK(p.ops[1].backward_time() == Time::us(1200));
  CHECK(p.ops[2].backward_time() == Time::us(240));
  CHECK(p.ops[3].backward_time() == Time::us(60));
  CHECK(p.ops[4].backward_time() == Time::us(1300));  // alone: unchanged
  CHECK(p.ops[7].backward_time() == Time::us(20));    // node7 has no forward time: all to node8
  CHECK(p.throughput_1gpu() == doctest::Approx(32 / 6.43e-3));

  // Without redistribution the backward times stay as recorded.
  workloads::PipeDreamCorrection only_forward;
  only_forward.redistribute_backward = false;
  const auto f = import_pipedream(g, {.correction = only_forward});
  CHECK(f.profile.ops[3].backward_time() == Time::us(900));
  CHECK(f.report.runs == 0);
  // A larger overhead floors more modules; the floor never raises a time.
  workloads::PipeDreamCorrection big;
  big.sync_overhead = Time::ms(1);
  const auto b = import_pipedream(g, {.correction = big});
  CHECK(b.profile.ops[1].forward_time() == Time::us(250));
  CHECK(b.profile.ops[3].forward_time() == Time::us(10));
  CHECK(b.report.floored == 4);
}

TEST_CASE("pipedream: bad lines name file:line:col") {
  CHECK(error_of("") == "g.txt: no node lines (not a PipeDream graph file?)");
  CHECK(error_of("nodeX -- ReLU -- forward_compute_time=1, backward_compute_time=1, activation_size=1, "
                 "parameter_size=0\n")
            .starts_with("g.txt:1:1: expected a node name like node12, got \"nodeX\""));
  const std::string bad_time =
      error_of(std::string(kConv) +
               "node3 -- ReLU -- forward_compute_time=fast, backward_compute_time=1, "
               "activation_size=1, parameter_size=0\n");
  CHECK(bad_time.starts_with("g.txt:2:39: expected milliseconds"));
  CHECK(bad_time.find("got \"fast\"") != std::string::npos);
  CHECK(error_of("node3 -- ReLU -- forward_compute_time=1, backward_compute_time=1, activation_size=1.5, "
                 "parameter_size=0\n")
            .find("g.txt:1:") == 0);
  CHECK(error_of("node3 -- ReLU -- forward_compute_time=1, backward_compute_time=1, activation_size=1\n")
            .find("missing parameter_size") != std::string::npos);
  CHECK(error_of("node3 -- ReLU -- forward_compute_time=1, forward_compute_time=1, backward_compute_time=1, "
                 "activation_size=1, parameter_size=0\n")
            .find("repeated key") != std::string::npos);
  CHECK(error_of("node3 -- ReLU -- forward_compute_time=1, flops=9, backward_compute_time=1, "
                 "activation_size=1, parameter_size=0\n")
            .find("unknown key") != std::string::npos);
  CHECK(error_of("node3 -- ReLU -- forward_compute_time=-1, backward_compute_time=1, activation_size=1, "
                 "parameter_size=0\n")
            .find("must not be negative") != std::string::npos);
  CHECK(error_of("node3 ReLU\n").starts_with("g.txt:1:1: expected a node line"));
  CHECK(error_of(std::string(kConv) + kConv).starts_with("g.txt:2:1: node2 is already defined on line 1"));
  CHECK(error_of(std::string(kConv) + "\tnode2 -- node9\n")
            .starts_with("g.txt:2:2: node9 is not defined in the file, got \"node2 -- node9\""));
  CHECK(error_of(std::string(kConv) + "\tnode2 - node9\n").starts_with("g.txt:2:2: expected an edge line"));
  CHECK(error_of(std::string(kConv) + "\tnode2 -- node2\n").find("an edge from a node to itself") !=
        std::string::npos);
  // A cycle names its nodes and their lines.
  const std::string cyc = error_of(std::string(kConv) +
                                   "node3 -- ReLU -- forward_compute_time=1, backward_compute_time=1, "
                                   "activation_size=1, parameter_size=0\n"
                                   "\tnode2 -- node3\n\tnode3 -- node2\n");
  CHECK(cyc == "g.txt: the edges form a cycle through node2 (line 1), node3 (line 2)");
  CHECK_THROWS_AS(workloads::load_pipedream_graph("/nonexistent/graph.txt"), InputError);
}

TEST_CASE("pipedream: numbers that are no measurement name file:line:col") {
  auto line = [](const std::string& fwd, const std::string& act, const std::string& params) {
    return "node3 -- ReLU -- forward_compute_time=" + fwd +
           ", backward_compute_time=1, activation_size=" + act + ", parameter_size=" + params + "\n";
  };
  // 10^17 ms = 10^26 ps: more than sim::Time holds (column 39: the value after "forward_compute_time=").
  CHECK(error_of(line("99999999999999999", "1", "0")) ==
        "g.txt:1:39: a time of more than 2^63 ps; expected at most 2^62 ps (53.4 days), got "
        "\"99999999999999999\"");
  // 9223372036 ms = 9.2·10^18 ps fits one time but passes 2^62 ps = 4.6·10^18 for the graph.
  CHECK(error_of(line("9223372036", "1", "0")) ==
        "g.txt:1:18: with this node the forward and backward times add up to more than 2^62 ps (53.4 days); "
        "expected "
        "a graph of at most that much time, got \"forward_compute_time=9223372036, backward_compute_time=1, "
        "activation_size=1, parameter_size=0\"");
  // Before: a sum that wrapped to "-2 B", or "transfer time overflows". The activation is at column
  // 17 ("node3 -- ReLU -- ") + 21 + 3 ("forward_compute_time=1, ") + 25 + 16 + 1 = 83, the parameters at
  // 83 + 3 + 15 = 101.
  CHECK(error_of(line("1", "9223372036854775807", "0")) ==
        "g.txt:1:83: a tensor of more than 1 TiB; expected at most 1 TiB (no GPU holds more), got "
        "\"9223372036854775807\"");
  CHECK(error_of(line("1", "[1099511627776; 1]", "0")) ==
        "g.txt:1:83: outputs of more than 1 TiB in all; expected at most 1 TiB (no GPU holds more), got "
        "\"[1099511627776; 1]\"");
  CHECK(error_of(line("1", "[8; ; 8]", "0")) ==
        "g.txt:1:83: an empty item in the list; expected byte counts separated by ;, got \"[8; ; 8]\"");
  CHECK(error_of(line("1", "1", "99999999999999999999")) ==
        "g.txt:1:101: a tensor of more than 1 TiB; expected at most 1 TiB (no GPU holds more), got "
        "\"99999999999999999999\"");
  // 1 TiB of parameters is the most a graph profiled on one GPU can have: node4's byte is one too many.
  const std::string two =
      line("1", "1", "1099511627776") +
      "node4 -- ReLU -- forward_compute_time=1, backward_compute_time=1, activation_size=1, "
      "parameter_size=1\n\tnode3 -- node4\n";
  CHECK(error_of(two) ==
        "g.txt:2:18: with this node the parameters add up to more than 1 TiB; expected at most 1 TiB (the "
        "graph was "
        "profiled on one GPU), got \"forward_compute_time=1, backward_compute_time=1, activation_size=1, "
        "parameter_size=1\"");
  CHECK(error_of(line("1", "1", "1099511627776")) == "(no error)");
}

TEST_CASE("hybridsim import pipedream prints the profile and the correction") {
  const std::string cmd = std::string(HYBRIDSIM_CLI) + " import pipedream " + tiny_path() +
                          " --batch 32 --correct 2>/dev/null";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string yaml;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, pipe)) yaml += buf;
  CHECK(pclose(pipe) == 0);
  const auto expected = import_pipedream(workloads::load_pipedream_graph(tiny_path()),
                                         {.batch = 32, .correction = workloads::PipeDreamCorrection{}});
  CHECK(workloads::parse_profile(yaml, "<stdout>") == expected.profile);
  const std::string report_cmd = std::string(HYBRIDSIM_CLI) + " import pipedream " + tiny_path() +
                                 " --batch 32 --correct 2>&1 >/dev/null";
  FILE* p2 = popen(report_cmd.c_str(), "r");
  std::string report;
  while (std::fgets(buf, sizeof buf, p2)) report += buf;
  CHECK(pclose(p2) == 0);
  CHECK(report.find("1.495 ms of forward synchronization removed") != std::string::npos);
  // The replay check against the graph's summed times: the correction's difference, ...
  CHECK(report.find("replay on one simulated GPU: " + sim::format_time(expected.profile.step_time_1gpu()) +
                    " against the graph's summed times ") != std::string::npos);
  CHECK(report.find("from --correct)") != std::string::npos);
  // ... and without it, the same time exactly.
  const std::string plain_cmd = std::string(HYBRIDSIM_CLI) + " import pipedream " + tiny_path() +
                                " --batch 32 2>&1 >/dev/null";
  FILE* p3 = popen(plain_cmd.c_str(), "r");
  std::string plain;
  while (std::fgets(buf, sizeof buf, p3)) plain += buf;
  CHECK(pclose(p3) == 0);
  const auto recorded = import_pipedream(workloads::load_pipedream_graph(tiny_path()), {.batch = 32});
  const std::string summed =
      sim::format_time(recorded.report.forward_recorded + recorded.report.backward_recorded);
  CHECK_MESSAGE(plain.find("replay on one simulated GPU: " + summed + " against the graph's summed times " +
                           summed + " (forward ") != std::string::npos, plain);
  CHECK(plain.find("; 0.00%, exact)") != std::string::npos);
}
