// The profile format (workloads/profile/profile_io.h): a small hand-written profile parsed, summed and
// round-tripped, and every malformed variant rejected with file:line:col and the field at fault.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <string>

#include "schema_checks.h"
#include "sim/error.h"
#include "workloads/profile/profile_io.h"

using namespace hybridsim;
using namespace hybridsim::workloads;

namespace {

// Line numbers matter below: "format" is line 1.
const std::string kTiny = R"(format: hybridsim-profile/1
metadata:
  network: tiny
  gpu: test-gpu
  precision: fp32
  batch_per_gpu: 2
  sequence_length: 2
  throughput_unit: tokens
  units_per_step: 4
optimizer: {name: sgd, time_per_gib: 1 ms}
ops:
  - name: emb
    activation: 1 KiB
    forward: [{name: gather, duration: 10 us}]
    backward: [{name: scatter, duration: 20 us}]
    gradient: {bytes: 1 GiB, exchange: sparse-allgather, sparse_bytes_per_worker: 256 MiB}
  - name: rnn.t0
    layer: rnn
    step: 0
    inputs: [emb]
    forward: [{name: gemm, duration: 100 us}, {name: pointwise, duration: 5 us}]
    backward: [{name: gemm_grad, duration: 200 us}]
    gradient: {bytes: 512 MiB, exchange: dense-allreduce}
  - name: rnn.t1
    layer: rnn
    step: 1
    inputs: [emb, rnn.t0]
    forward: [{name: gemm, duration: 100 us}]
    backward: []
)";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

// The message of the InputError that parsing `text` throws ("" if none).
std::string error_of(const std::string& text) {
  try {
    parse_profile(text, "tiny.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("profile format: a hand-written profile parses into the expected values") {
  const Profile p = parse_profile(kTiny, "tiny.yaml");
  CHECK(p.meta.network == "tiny");
  CHECK(p.meta.batch_per_gpu == 2);
  CHECK(p.meta.sequence_length == 2);
  CHECK(p.meta.target_length == 0);  // absent → 0
  CHECK(p.meta.units_per_step == 4);
  CHECK(p.optimizer.time_per_gib == sim::Time::ms(1));
  REQUIRE(p.ops.size() == 3);
  CHECK(p.ops[0].layer == "emb");  // defaults to the name
  CHECK_FALSE(p.ops[0].step.has_value());
  CHECK(p.ops[0].activation_bytes == sim::Bytes::kib(1));
  CHECK(p.ops[0].exchange == GradientExchange::SparseAllGather);
  CHECK(p.ops[0].sparse_bytes_per_worker == sim::Bytes::mib(256));
  CHECK(p.ops[1].layer == "rnn");
  CHECK(p.ops[1].step == 0);
  CHECK(p.ops[2].inputs == std::vector<std::uint32_t>{0, 1});
  CHECK(p.ops[2].backward.empty());
  CHECK_FALSE(p.ops[2].has_gradient());
  CHECK(p.op_by_name("rnn.t1") == 2);
  CHECK_FALSE(p.find_op("rnn.t2").has_value());
  CHECK_THROWS_AS(p.op_by_name("rnn.t2"), InputError);
}

TEST_CASE("profile format: step time sums kernels and the optimizer over the bytes each op updates") {
  const Profile p = parse_profile(kTiny, "tiny.yaml");
  // Forward 10 + (100 + 5) + 100 = 215 us; backward 20 + 200 = 220 us.
  CHECK(p.forward_time() == sim::Time::us(215));
  CHECK(p.backward_time() == sim::Time::us(220));
  // One worker: the sparse table updates only its own 256 MiB of rows (0.25 ms at 1 ms/GiB), the
  // dense op all 512 MiB (0.5 ms).
  CHECK(p.optimizer_time(1) == sim::Time::us(750));
  CHECK(p.step_time_1gpu() == sim::Time::us(1185));
  CHECK(p.throughput_1gpu() == doctest::Approx(4 / 1185e-6));
  // Four workers gather 4 × 256 MiB = the whole 1 GiB table (1 ms); eight cannot touch more.
  CHECK(p.optimizer_time(4) == sim::Time::us(1500));
  CHECK(p.optimizer_time(8) == sim::Time::us(1500));
  CHECK(p.parameter_bytes() == sim::Bytes::gib(1) + sim::Bytes::mib(512));
  // Rounding is up: 1 byte at 1 ms/GiB is 10^9 / 2^30 = 0.93 ps → 1 ps.
  CHECK(p.optimizer.update_time(sim::Bytes::of(1)) == sim::Time::ps(1));
}

TEST_CASE("profile format: save → load is the identity, and saving is deterministic") {
  Profile p = parse_profile(kTiny, "tiny.yaml");
  // Text that needs quoting survives too.
  p.meta.notes = "a \"quoted\" note: with colon, # hash\nand a second line";
  p.ops[0].name = "emb: shared";
  p.ops[1].layer = "[rnn]";
  const std::string text = profile_to_yaml(p);
  const Profile q = parse_profile(text, "saved.yaml");
  CHECK(q == p);
  CHECK(profile_to_yaml(q) == text);
  CHECK(contains(text, "format: hybridsim-profile/1\n"));
  CHECK(contains(text, "    gradient: {bytes: 536870912 B, exchange: dense-allreduce}\n"));
}

TEST_CASE("profile format: errors name file:line:col, the field and what was expected") {
  SUBCASE("unknown input op") {
    const auto e = error_of(replaced(kTiny, "inputs: [emb, rnn.t0]", "inputs: [emb, rnn.t9]"));
    CHECK(e ==
          "tiny.yaml:27:19: ops[2].inputs[1]: unknown input op \"rnn.t9\" (did you mean 'rnn.t0'?); expected "
          "the name of an earlier op");
  }
  SUBCASE("missing duration") {
    const auto e = error_of(replaced(kTiny, "{name: pointwise, duration: 5 us}", "{name: pointwise}"));
    CHECK(e == "tiny.yaml:21:47: ops[1].forward[1].duration: missing required field; expected a time such as "
              "\"700 ns\", >= 0");
  }
  SUBCASE("bad unit") {
    const auto e =
        error_of(replaced(kTiny, "[{name: gemm, duration: 100 us}]", "[{name: gemm, duration: 100 uss}]"));
    CHECK(
        e ==
        "tiny.yaml:28:38: ops[2].forward[0].duration: got \"100 uss\" (unknown unit \"uss\" in \"100 uss\"; "
        "the time units are ps, ns, us (or µs), ms, s); expected a time such as \"700 ns\", >= 0");
  }
  SUBCASE("bad size") {
    const auto e = error_of(replaced(kTiny, "activation: 1 KiB", "activation: 1 KiBB"));
    CHECK(e ==
          "tiny.yaml:13:17: ops[0].activation: got \"1 KiBB\" (unknown unit \"KiBB\" in \"1 KiBB\"; the size "
          "units are B, kB, MB, GB, TB (powers of 1000), KiB, MiB, GiB, TiB (powers of 1024), or the same "
          "with b for bits); expected a size such as \"512 KiB\" or \"25 MB\"");
  }
  SUBCASE("unknown key") {
    const auto e = error_of(replaced(kTiny, "    layer: rnn\n    step: 1", "    layr: rnn\n    step: 1"));
    CHECK(e ==
          "tiny.yaml:25:5: ops[2].layr: unknown field (did you mean 'layer'?); expected one of: name, layer, "
          "step, inputs, activation, forward, backward, gradient");
  }
  SUBCASE("forward reference") {
    std::string text = replaced(kTiny, "inputs: [emb, rnn.t0]", "inputs: [emb]");
    text = replaced(text, "inputs: [emb]\n    forward: [{name: gemm, duration: 100 us}, ",
                    "inputs: [emb, rnn.t1]\n    forward: [{name: gemm, duration: 100 us}, ");
    const auto e = error_of(text);
    CHECK(e == "tiny.yaml:20:19: ops[1].inputs[1]: forward reference: input \"rnn.t1\" is defined later (at "
              "tiny.yaml:24:5); list ops so that inputs come first");
  }
  SUBCASE("cycle") {
    const std::string tail = "\n    forward: [{name: gemm, duration: 100 us}, ";
    const auto e = error_of(replaced(kTiny, "inputs: [emb]" + tail, "inputs: [emb, rnn.t1]" + tail));
    CHECK(
        e ==
        "tiny.yaml:20:19: ops[1].inputs[1]: cycle: input \"rnn.t1\" (at tiny.yaml:24:5) depends on this op");
  }
  SUBCASE("an op that is its own input") {
    const auto e = error_of(replaced(kTiny, "inputs: [emb, rnn.t0]", "inputs: [emb, rnn.t1]"));
    CHECK(e == "tiny.yaml:27:19: ops[2].inputs[1]: cycle: the op lists itself as an input");
  }
  SUBCASE("duplicate op name") {
    const auto e = error_of(replaced(kTiny, "- name: rnn.t1", "- name: rnn.t0"));
    CHECK(e ==
          "tiny.yaml:24:11: ops[2].name: duplicate op name \"rnn.t0\" (first defined at tiny.yaml:17:5); "
          "expected a name no other op has");
  }
  SUBCASE("unsupported format version") {
    const auto e = error_of(replaced(kTiny, "hybridsim-profile/1", "hybridsim-profile/2"));
    CHECK(
        e ==
        "tiny.yaml:1:9: format: got \"hybridsim-profile/2\"; expected hybridsim-profile/1 (the only version "
        "this code reads)");
  }
  SUBCASE("missing metadata field") {
    const auto e = error_of(replaced(kTiny, "  units_per_step: 4\n", ""));
    CHECK(e ==
          "tiny.yaml:3:3: metadata.units_per_step: missing required field; expected a whole number from 1 to "
          "1099511627776");
  }
  SUBCASE("batch must be a positive whole number") {
    const auto e = error_of(replaced(kTiny, "batch_per_gpu: 2", "batch_per_gpu: 2.5"));
    CHECK(e ==
          "tiny.yaml:6:18: metadata.batch_per_gpu: got \"2.5\"; expected a whole number from 1 to "
          "1099511627776");
  }
  SUBCASE("unknown exchange") {
    const auto e = error_of(replaced(kTiny, "exchange: dense-allreduce", "exchange: allreduce"));
    CHECK(e == "tiny.yaml:23:42: ops[1].gradient.exchange: unknown value \"allreduce\"; expected one of: "
              "dense-allreduce, sparse-allgather");
  }
  SUBCASE("sparse bytes on a dense gradient") {
    const auto e = error_of(replaced(kTiny, "exchange: dense-allreduce}",
                                     "exchange: dense-allreduce, sparse_bytes_per_worker: 1 MiB}"));
    CHECK(e == "tiny.yaml:23:84: ops[1].gradient.sparse_bytes_per_worker: belongs only to sparse-allgather; "
              "expected exchange: sparse-allgather, or no sparse_bytes_per_worker");
  }
  SUBCASE("sparse gradient without its per-worker bytes") {
    const auto e = error_of(replaced(kTiny, ", sparse_bytes_per_worker: 256 MiB}", "}"));
    CHECK(
        e ==
        "tiny.yaml:16:15: ops[0].gradient.sparse_bytes_per_worker: missing required field (sparse-allgather "
        "needs it); expected a size such as \"512 KiB\" or \"25 MB\", > 0");
  }
  SUBCASE("negative step") {
    const auto e = error_of(replaced(kTiny, "step: 1", "step: -1"));
    CHECK(e == "tiny.yaml:26:11: ops[2].step: got \"-1\"; expected a whole number from 0 to 1000000000");
  }
  SUBCASE("not YAML") {
    const auto e = error_of(replaced(kTiny, "inputs: [emb]", "inputs: [emb"));
    CHECK(e == "tiny.yaml:21:12: invalid YAML: end of sequence flow not found");
  }
  SUBCASE("kernels must be a list") {
    const auto e = error_of(replaced(kTiny, "backward: []", "backward: none"));
    CHECK(e == "tiny.yaml:29:15: ops[2].backward: got \"none\"; expected a list of kernels {name, duration, "
              "idle_before, bound}, [] for none");
  }
  // The rules every YAML input shares (sim/yaml/tree.h), with the same messages.
  SUBCASE("repeated key") {
    const auto e = error_of(replaced(kTiny, "  gpu: test-gpu\n", "  gpu: test-gpu\n  gpu: other\n"));
    CHECK(e == "tiny.yaml:5:3: invalid YAML: repeated key 'gpu'");
  }
  SUBCASE("a key that is a list") {
    const auto e = error_of(replaced(kTiny, "optimizer:", "[a, b]: 1\noptimizer:"));
    CHECK(e == "tiny.yaml:10:1: invalid YAML: a key must be plain text, not a list or mapping");
  }
  SUBCASE("unknown key of a kernel") {
    const auto e =
        error_of(replaced(kTiny, "{name: gather, duration: 10 us}", "{name: gather, duraton: 10 us}"));
    CHECK(
        e ==
        "tiny.yaml:14:30: ops[0].forward[0].duraton: unknown field (did you mean 'duration'?); expected one "
        "of: name, duration, idle_before, bound");
  }
  SUBCASE("two documents") {
    CHECK(error_of(kTiny + "---\n" + kTiny) ==
          "tiny.yaml:31:1: invalid YAML: expected one document, found 2 (remove the extra '---')");
  }
  SUBCASE("an empty file") {
    CHECK(error_of("") ==
          "tiny.yaml:1:1: format: missing required field; expected hybridsim-profile/1 (the only "
          "version this code reads)");
  }
}

TEST_CASE("profile format: a file that is missing, not a file or an alias bomb is an InputError naming it") {
  const auto error_loading = [](const std::string& path) {
    try {
      load_profile(path);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_loading("/nonexistent/dir/profile.yaml") ==
        "cannot open profile file \"/nonexistent/dir/profile.yaml\": No such file or directory");
  CHECK(error_loading("/dev/zero") ==
        "cannot open profile file \"/dev/zero\": not a regular file (a character device)");
  const std::string dir = std::string(HYBRIDSIM_SOURCE_DIR) + "/workloads/profiles";
  CHECK(error_loading(dir) == "cannot open profile file \"" + dir + "\": is a directory");
  // Nine levels of ten aliases (10^9 copies of one scalar): stopped at the node budget, at the
  // outermost alias being expanded when it runs out (line 9, the second *e).
  const std::string bomb = std::string(HYBRIDSIM_SOURCE_DIR) + "/tests/data/bad/alias-bomb-profile.yaml";
  CHECK(error_loading(bomb) ==
        bomb +
            ":9:14: invalid YAML: more than 250000 nodes once aliases are expanded (the "
            "limit for any input file); expected a smaller document or fewer aliases");
}

TEST_CASE("profile format: the schema table is well formed and workloads/README.md holds its reference") {
  test::check_well_formed(profile_schema());
  test::check_defaults(profile_schema());
  test::check_reference_block("workloads/README.md", profile_schema().reference_markdown());
}

TEST_CASE("profile format: validate_profile checks profiles built in code") {
  Profile p = parse_profile(kTiny, "tiny.yaml");
  CHECK_NOTHROW(validate_profile(p));
  Profile bad = p;
  bad.ops[1].inputs = {2};  // a later op
  CHECK_THROWS_AS(validate_profile(bad), InputError);
  bad = p;
  bad.ops[1].exchange = GradientExchange::None;  // bytes without an exchange
  CHECK_THROWS_AS(validate_profile(bad), InputError);
  bad = p;
  bad.ops[2].name = "emb";
  CHECK_THROWS_AS(validate_profile(bad), InputError);
}

TEST_CASE("profile format: a kernel's bound is compute unless it says memory, and round-trips") {
  const std::string text = replaced(kTiny, "{name: pointwise, duration: 5 us}",
                                    "{name: pointwise, duration: 5 us, bound: memory}");
  const Profile p = parse_profile(text, "tiny.yaml");
  CHECK(p.ops[1].forward[0].bound == sim::KernelBound::Compute);
  CHECK(p.ops[1].forward[1].bound == sim::KernelBound::Memory);
  // Written only when it is memory, so older files and compute kernels read and write as before.
  const std::string saved = profile_to_yaml(p);
  CHECK(contains(saved, "{name: pointwise, duration: 5 us, bound: memory}"));
  CHECK(contains(saved, "{name: gemm, duration: 100 us}, "));
  CHECK(parse_profile(saved, "again.yaml") == p);
  const auto e = error_of(
      replaced(kTiny, "{name: pointwise, duration: 5 us}", "{name: pointwise, duration: 5 us, bound: io}"));
  CHECK(contains(e, "tiny.yaml:21:"));
  CHECK(contains(e, ".bound: unknown value \"io\""));
  CHECK(contains(e, "expected one of: compute, memory"));
}
