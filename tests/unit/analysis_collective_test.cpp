// Collectives on real topologies through the planner (ring search + routes), as `hybridsim
// collective` runs them.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <cstdio>
#include <set>
#include <sstream>
#include <string>

#include "analysis/collective/collective_report.h"
#include "analysis/collective/collective_sweep.h"
#include "analysis/output/text_table.h"
#include "sim/error.h"
#include "topology/preset_registry.h"

using namespace hybridsim;

namespace {

analysis::CollectiveSweepOptions all_gpus(const topology::Topology& t) {
  analysis::CollectiveSweepOptions o;
  for (int g = 0; g < static_cast<int>(t.gpus().size()); ++g) o.gpus.push_back(g);
  return o;
}

}  // namespace

TEST_CASE("DGX-1 8-GPU all-reduce is NVLink-bound, a PCIe-only ring is much slower") {
  const auto t = topology::build_cluster({.preset = "dgx1-v100"});
  auto o = all_gpus(t);
  const auto nvlink = analysis::run_one_collective(t, o, sim::Bytes::mib(256));
  // Six channels over NVLink at NCCL's 20 GB/s of payload a link (25 GB/s line rate × 0.8):
  // busbw approaches 6 × 20 = 120 GB/s (ring, Simple at this size) and everything travels on
  // NVLink.
  CHECK(nvlink.algorithm == workloads::AllReduceAlgorithm::Ring);
  CHECK(nvlink.protocol == sim::Protocol::Simple);
  CHECK(nvlink.busbw_gb_per_s > 115);
  CHECK(nvlink.busbw_gb_per_s <= 120);
  const auto& kinds = nvlink.bytes_by_link_kind;
  CHECK(kinds[static_cast<int>(sim::LinkKind::NVLink)].count() > 0);
  CHECK(kinds[static_cast<int>(sim::LinkKind::PCIe)].count() == 0);
  o.comm.pcie_only = true;
  const auto pcie = analysis::run_one_collective(t, o, sim::Bytes::mib(256));
  CHECK(pcie.bytes_by_link_kind[static_cast<int>(sim::LinkKind::PCIe)].count() > 0);
  // PCIe Gen3 (12 GB/s achievable) shared by GPU pairs behind each switch: at least 10× slower.
  CHECK(pcie.time.to_seconds() > 10 * nvlink.time.to_seconds());
}

TEST_CASE("2-node all-reduce crosses InfiniBand, hierarchical beats the flat ring there") {
  const auto t = topology::build_cluster({.preset = "dgx1-v100", .nodes = 2});
  auto o = all_gpus(t);
  o.comm.algorithm = workloads::AllReduceAlgorithm::Ring;
  const auto ring = analysis::run_one_collective(t, o, sim::Bytes::mib(64));
  CHECK(ring.bytes_by_link_kind[static_cast<int>(sim::LinkKind::InfiniBand)].count() > 0);
  o.comm.algorithm = workloads::AllReduceAlgorithm::Hierarchical;
  const auto hier = analysis::run_one_collective(t, o, sim::Bytes::mib(64));
  // The hierarchical algorithm moves only 1/8 of the data over the network per GPU.
  CHECK(hier.time < ring.time);
  CHECK(hier.bytes_by_link_kind[static_cast<int>(sim::LinkKind::InfiniBand)] <
        ring.bytes_by_link_kind[static_cast<int>(sim::LinkKind::InfiniBand)]);
}

TEST_CASE("the hierarchical algorithm is refused for every op but all-reduce") {
  const auto t = topology::build_cluster({.preset = "dgx1-v100", .nodes = 2});
  auto o = all_gpus(t);
  o.comm.algorithm = workloads::AllReduceAlgorithm::Hierarchical;
  o.min_bytes = o.max_bytes = sim::Bytes::mib(1);
  for (const auto op : {sim::CollectiveOp::Broadcast, sim::CollectiveOp::AllGather,
                        sim::CollectiveOp::ReduceScatter}) {
    CAPTURE(sim::collective_op_name(op));
    o.op = op;
    CHECK_THROWS_AS(analysis::run_collective_sweep(t, o), InputError);
    CHECK_THROWS_AS(analysis::run_one_collective(t, o, sim::Bytes::mib(1)), InputError);
  }
  o.op = sim::CollectiveOp::AllReduce;
  CHECK(analysis::run_collective_sweep(t, o).size() == 1);
}

TEST_CASE("sweep sizes, bus factors and report formats") {
  const auto t = topology::build_cluster({.preset = "ideal-ring"});
  auto o = all_gpus(t);
  o.min_bytes = sim::Bytes::of(1024);
  o.max_bytes = sim::Bytes::mib(1);
  o.step_factor = 4;
  const auto rows = analysis::run_collective_sweep(t, o);
  REQUIRE(rows.size() == 6);  // 1 KiB, 4 KiB, ..., 1 MiB
  CHECK(rows.back().size == sim::Bytes::mib(1));
  for (const auto& r : rows) {
    CHECK(r.count == r.size.count() / 4);
    // Relative (scale 0): at 1 KiB busbw is a fraction of a GB/s.
    CHECK(r.busbw_gb_per_s == doctest::Approx(r.algbw_gb_per_s * 2 * 7 / 8).scale(0));
  }
  const std::string table = analysis::collective_table(rows, "x");
  CHECK(table.find("algbw") != std::string::npos);
  CHECK(analysis::collective_csv(rows).starts_with("size_bytes,count,time_us,algbw_gb_per_s"));
  o.op = sim::CollectiveOp::Broadcast;
  const auto b = analysis::run_one_collective(t, o, sim::Bytes::mib(1));
  CHECK(b.busbw_gb_per_s == doctest::Approx(b.algbw_gb_per_s).scale(0));
}

TEST_CASE("collective: the count column is nccl-tests' count, per rank where nccl-tests has it so") {
  // nccl-tests prints the count it passes NCCL: the whole buffer's floats for an all-reduce and a
  // broadcast, each rank's part for a reduce-scatter, an all-gather and an all-to-all (size / (4 n)).
  // 1 MiB on 8 GPUs: 262,144 floats, 32,768 a rank.
  using sim::CollectiveOp;
  CHECK(analysis::nccl_tests_count(CollectiveOp::AllReduce, sim::Bytes::mib(1), 8) == 262'144);
  CHECK(analysis::nccl_tests_count(CollectiveOp::Broadcast, sim::Bytes::mib(1), 8) == 262'144);
  for (const auto op : {CollectiveOp::ReduceScatter, CollectiveOp::AllGather, CollectiveOp::AllToAll}) {
    CAPTURE(sim::collective_op_name(op));
    CHECK(analysis::nccl_tests_count(op, sim::Bytes::mib(1), 8) == 32'768);
  }
  // In a sweep's rows, the table and the CSV: a reduce-scatter of 96 B over 6 GPUs counts 4 a rank.
  const auto t = topology::build_cluster({.preset = "dgx1-v100"});
  auto o = all_gpus(t);
  o.gpus = {0, 1, 2, 3, 4, 5};
  o.op = CollectiveOp::ReduceScatter;
  o.min_bytes = o.max_bytes = sim::Bytes::of(96);
  const auto rows = analysis::run_collective_sweep(t, o);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].count == 4);
  CHECK(analysis::collective_csv(rows).find("\n96,4,") != std::string::npos);
}

TEST_CASE("collective table: nccl-tests' columns first, redop and root among them") {
  // nccl-tests: size, count, type, redop, root, then time, algbw, busbw (its out-of-place set; the
  // in-place set the simulation would time alike, said under the table). A reduction sums, the
  // others name none; a broadcast's root is rank 0, the other ops' -1.
  analysis::CollectiveSweepRow row;
  row.size = sim::Bytes::mib(1);
  row.count = 262'144;
  row.time = sim::Time::us(100);
  const std::string reduce = analysis::collective_table({row}, "x");
  CHECK(reduce.find("#         size        count   type   redop  root        time    algbw") !=
        std::string::npos);
  CHECK(reduce.find(" 262144  float     sum    -1      100.00") != std::string::npos);
  CHECK(reduce.find("# in-place: the same time as out-of-place") != std::string::npos);
  row.op = sim::CollectiveOp::Broadcast;
  CHECK(analysis::collective_table({row}, "x").find("  float    none     0      100.00") !=
        std::string::npos);
  row.op = sim::CollectiveOp::AllGather;
  CHECK(analysis::collective_table({row}, "x").find("  float    none    -1      100.00") !=
        std::string::npos);
}

TEST_CASE("collective table: a value wider than its column keeps a space before it") {
  // 42 days of one all-reduce (--reduction-bandwidth "1 B/s") printed "float3670016007890.21".
  analysis::CollectiveSweepRow row;
  row.size = sim::Bytes::gib(1);
  row.count = row.size.count() / 4;
  row.time = sim::Time::us(3'670'016'007'890);
  const std::string table = analysis::collective_table({row}, "x");
  CHECK(table.find("-1 3670016007890.00") != std::string::npos);
  CHECK(table.find("-13670016007890") == std::string::npos);
}

TEST_CASE("collective table: cells are right-aligned in display columns, a non-ASCII unit included") {
  // The table padded by bytes: "µs" (3 bytes, 2 columns) or "×" (2 bytes, 1 column) took one column
  // too few. Its cells are the shared text_table.h's, which count columns.
  CHECK(analysis::right_aligned("12.5 µs", 9) == "  12.5 µs");
  CHECK(analysis::display_columns(analysis::right_aligned("x4 ×", 6)) == 6);
  CHECK(analysis::right_aligned("wider", 3) == "wider");
  // Every line of a table, titles and rows, ends at the same column.
  const auto t = topology::build_cluster({.preset = "ideal-ring"});
  auto o = all_gpus(t);
  o.min_bytes = sim::Bytes::of(1024);
  o.max_bytes = sim::Bytes::mib(1);
  o.step_factor = 4;
  std::istringstream table(analysis::collective_table(analysis::run_collective_sweep(t, o), "x"));
  std::set<std::size_t> widths;
  std::string line;
  for (int i = 0; i < 3; ++i) std::getline(table, line);  // the title and the empty "#"
  while (std::getline(table, line) && !line.starts_with("# Avg"))
    widths.insert(analysis::display_columns(line));
  CHECK(widths.size() == 1);
}

TEST_CASE("hybridsim collective prints nccl-tests columns") {
  const std::string cmd = std::string(HYBRIDSIM_CLI) +
                          " collective -t dgx1-v100 -b 1MiB -e 4MiB -f 4 --format csv 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, pipe)) out += buf;
  CHECK(pclose(pipe) == 0);
  CHECK(out.starts_with("size_bytes,count,time_us,algbw_gb_per_s,busbw_gb_per_s"));
  CHECK(out.find("\n1048576,262144,") != std::string::npos);
  CHECK(out.find("\n4194304,1048576,") != std::string::npos);
  const std::string bad = std::string(HYBRIDSIM_CLI) + " collective -t dgx1-v100 --op allsum 2>&1";
  FILE* p2 = popen(bad.c_str(), "r");
  std::string err;
  while (std::fgets(buf, sizeof buf, p2)) err += buf;
  CHECK(pclose(p2) != 0);
  CHECK(err.find("unknown collective \"allsum\"") != std::string::npos);
}

namespace {

// Runs `hybridsim collective ARGS`, its output (stdout and stderr) into `out`; the exit status.
int run_collective_cli(const std::string& args, std::string& out) {
  const std::string cmd = std::string(HYBRIDSIM_CLI) + " collective " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  out.clear();
  char buf[4096];
  while (std::fgets(buf, sizeof buf, pipe)) out += buf;
  return pclose(pipe);
}

}  // namespace

TEST_CASE(
    "hybridsim collective --algorithm hierarchical is an error for ops other than all-reduce") {
  std::string out;
  for (const char* op : {"broadcast", "allgather", "reducescatter"}) {
    CAPTURE(op);
    CHECK(run_collective_cli(
              "-t dgx1-v100 --nodes 2 -a hierarchical --op " + std::string(op) + " -b 1MiB -e 1MiB", out) !=
          0);
    CAPTURE(out);
    CHECK(out.find("--algorithm hierarchical applies only to all-reduce") != std::string::npos);
    CHECK(out.find("broadcast, all-gather and reduce-scatter") != std::string::npos);
    CHECK(out.find("hierarchical,") == std::string::npos);  // no table titled "hierarchical"
  }
  // The ring is still fine for them, and hierarchical for all-reduce.
  CHECK(run_collective_cli("-t dgx1-v100 --nodes 2 --algorithm ring --op broadcast -b 1MiB -e 1MiB", out) ==
        0);
  CHECK(run_collective_cli("-t dgx1-v100 --nodes 2 --algorithm hierarchical -b 1MiB -e 1MiB", out) == 0);
  CHECK(out.find("all-reduce over 16 GPUs") != std::string::npos);
  CHECK(out.find("hierarchical") != std::string::npos);
}

TEST_CASE("hybridsim collective --gpus-per-node sizes the ring presets") {
  std::string out;
  CHECK(run_collective_cli("-t ideal-ring --gpus-per-node 64 -b 1MiB -e 1MiB", out) == 0);
  CAPTURE(out);
  CHECK(out.find("all-reduce over 64 GPUs") != std::string::npos);
  // A DGX-1 has its 8 GPUs and no other count.
  CHECK(run_collective_cli("-t dgx1-v100 --gpus-per-node 4 -b 1MiB -e 1MiB", out) != 0);
}

TEST_CASE("collective: a folded ideal ring of 16,384 GPUs holds state that grows with N, not N squared") {
  // Issue 31: its state took 3.2 GB at 16,384 GPUs (74 MB at 2,048), so the documented 65,536-GPU
  // ring ran out of memory. Folded onto one position it holds per-rank state only: about 5.5 MB,
  // under a cap of 8 MB (the catalogue's collective-limit-sim-memory shows the refusal past one).
  std::string out;
  CHECK(run_collective_cli("-t ideal-ring --gpus-per-node 16384 --protocol ideal -a ring -b 1GiB -e 1GiB "
                           "--max-sim-memory 8MB",
                           out) == 0);
  CAPTURE(out);
  CHECK(out.find("at most 1 of 16384 ring positions simulated") != std::string::npos);
  CHECK(run_collective_cli("-t ideal-ring --gpus-per-node 16384 --protocol ideal -a ring -b 1GiB -e 1GiB "
                           "--max-sim-memory 1MB",
                           out) != 0);
}

TEST_CASE("collective: the lines while sizes are weighed give the command's end, their simulation counted") {
  // Issue 31 ("no command runs more than 10 s without a line that estimates its end"): collective -t
  // dgx1-v100 --nodes 8192 weighed its 26 sizes for 6 to 10 s, its lines saying "until every size is
  // weighed, their simulation not yet counted". Each size weighed now tells the simulation after: the
  // events in full of those weighed, each size left at the last one's. A clock a second later at each
  // reading makes lines due while the 4 sizes are weighed.
  const auto t = topology::build_cluster({.preset = "dgx1-v100", .nodes = 2});
  auto o = all_gpus(t);
  o.min_bytes = sim::Bytes::of(8);
  o.max_bytes = sim::Bytes::of(64);
  std::ostringstream lines;
  o.progress = &lines;
  double now = 100;
  o.clock = [&now] { return now += 1; };
  const auto rows = analysis::run_collective_sweep(t, o);
  REQUIRE(rows.size() == 4);  // 8, 16, 32, 64 B
  CAPTURE(lines.str());
  std::istringstream in(lines.str());
  int weighing = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.find("sizes weighed done") == std::string::npos) continue;
    ++weighing;
    CHECK(line.find("their simulation not yet counted") == std::string::npos);
    CHECK(line.find(" in all (its simulation after: about ") != std::string::npos);
    CHECK(line.find(" events at 5e6 events/s, from the ") != std::string::npos);
  }
  CHECK(weighing >= 1);
}

TEST_CASE("a reduce-scatter and an all-gather run whole floats for each GPU, as nccl-tests") {
  // Each GPU's part is size / n. The default sweep's 8 B and 16 B reduce-scatters on a DGX-1's 8 GPUs
  // ran parts of a quarter and a half float (8.50 us rows, where nccl-tests has none), and a 36 B
  // all-gather parts of 4.5 B: nccl-tests' count per rank is whole floats, 32 B here.
  const auto t = topology::build_cluster({.preset = "dgx1-v100"});
  auto o = all_gpus(t);
  o.min_bytes = sim::Bytes::of(8);
  o.max_bytes = sim::Bytes::of(72);
  o.step_factor = 4.5;  // 8 B, 36 B
  o.op = sim::CollectiveOp::ReduceScatter;
  const analysis::CollectiveSizes rs = analysis::collective_sizes(o);
  CHECK(rs.sizes == std::vector<sim::Bytes>{sim::Bytes::of(32)});
  CHECK(rs.note ==
        "1 size from 8 B left out, under one 4 B float for each of the 8 GPUs of a reduce-scatter (32 B); 1 "
        "size rounded down to a multiple of 32 B (whole floats for each GPU, as nccl-tests)");
  o.op = sim::CollectiveOp::AllGather;
  CHECK(analysis::collective_sizes(o).sizes == std::vector<sim::Bytes>{sim::Bytes::of(32)});
  const auto rows = analysis::run_collective_sweep(t, o);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].size == sim::Bytes::of(32));
  // nccl-tests' count of an all-gather is its count per rank: 32 B on 8 GPUs is 1 float each.
  CHECK(rows[0].count == 1);
  o.max_bytes = sim::Bytes::of(16);
  o.step_factor = 2;  // 8 B, 16 B
  CHECK_THROWS_WITH_AS(
      analysis::collective_sizes(o),
      "--max-bytes 16 B is under one 4 B float for each of the 8 GPUs of an all-gather (32 B), "
      "less than one element to each; expected --max-bytes of at least 32 B",
      InputError);
  // An all-reduce and a broadcast move the whole size: their sizes are whole floats only.
  for (const auto op : {sim::CollectiveOp::AllReduce, sim::CollectiveOp::Broadcast}) {
    o.op = op;
    CHECK(analysis::collective_sizes(o).sizes ==
          std::vector<sim::Bytes>{sim::Bytes::of(8), sim::Bytes::of(16)});
  }
}

TEST_CASE("an all-to-all runs whole floats for each GPU, says point-to-point and no channels") {
  // An all-to-all sends size / n to each of its n GPUs; nccl-tests counts that part in whole floats,
  // so on 8 GPUs the smallest all-to-all is 8 × 4 B = 32 B. The default sweep's 8 B and 16 B rows
  // sent nothing and printed 0.00 us under "ring ... 6" (NCCL's channel count on a DGX-1).
  const auto t = topology::build_cluster({.preset = "dgx1-v100"});
  auto o = all_gpus(t);
  o.op = sim::CollectiveOp::AllToAll;
  o.min_bytes = sim::Bytes::of(8);
  o.max_bytes = sim::Bytes::of(64);
  const analysis::CollectiveSizes sizes = analysis::collective_sizes(o);
  CHECK(sizes.sizes == std::vector<sim::Bytes>{sim::Bytes::of(32), sim::Bytes::of(64)});
  CHECK(sizes.note.find("2 sizes from 8 B left out, under one 4 B float for each of the 8 GPUs") !=
        std::string::npos);
  const auto rows = analysis::run_collective_sweep(t, o);
  REQUIRE(rows.size() == 2);
  for (const auto& r : rows) {
    CHECK(r.time > sim::Time::zero());
    CHECK(r.messages == 8 * 7);  // one message to each other GPU (a part is under the message size)
    CHECK(analysis::row_algorithm_name(r) == "point-to-point");
    CHECK(r.channels == 0);
  }
  CHECK(analysis::collective_table(rows, "x").find(" point-to-point Simple   -") != std::string::npos);
  // Why it ran in full: its sends are point to point, nothing to fold (it said "every rank message by
  // message (message by message)", the default reason of a collective with no shortcut).
  CHECK(analysis::collective_table(rows, "x").ends_with(
      "# simulation: every rank message by message (point-to-point sends between every pair: no ring or tree "
      "to fold)\n"));
  // 6 GPUs: 64 B rounds down to 48 B (2 floats each), 32 B to 24 B; 8 B and 16 B are left out.
  o.gpus = {0, 1, 2, 3, 4, 5};
  CHECK(analysis::collective_sizes(o).sizes ==
        std::vector<sim::Bytes>{sim::Bytes::of(24), sim::Bytes::of(48)});
  CHECK(analysis::collective_sizes(o).note.find("2 sizes rounded down to a multiple of 24 B") !=
        std::string::npos);
  // A range wholly under one float a GPU is refused, naming the option.
  o.max_bytes = sim::Bytes::of(16);
  CHECK_THROWS_WITH_AS(analysis::collective_sizes(o),
                       "--max-bytes 16 B is under one 4 B float for each of the 6 GPUs of an all-to-all "
                       "(24 B), less than one element to each; expected --max-bytes of at least 24 B",
                       InputError);
}
