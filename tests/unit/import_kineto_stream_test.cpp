// The streamed Kineto import (import_kineto_stream.h) against the whole-file import: the same
// profile and report, byte for byte, on every test trace and option, with batches down to one
// window (each read from its own part of the file); and the traces it hands back to the whole
// import (no ProfilerStep annotations, errors to report).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/error.h"
#include "tests/unit/import_kineto_files.h"
#include "tests/unit/test_files.h"
#include "workloads/import/import_kineto.h"
#include "workloads/import/import_kineto_stream.h"
#include "workloads/profile/profile_io.h"

using namespace hybridsim;
using hybridsim::testing::kineto_data;
using hybridsim::testing::read_whole_file;
using hybridsim::testing::replace_nth;
using hybridsim::testing::TempFile;
using workloads::KinetoImportOptions;
using workloads::kineto_detail::import_kineto_streamed;

namespace {

std::string text_of(const workloads::KinetoImport& r) {
  return workloads::profile_to_yaml(r.profile) + workloads::describe_kineto_import(r);
}

// Streamed with each batch size must equal the whole import; returns how many were streamed.
int check_streamed(const std::string& path, const KinetoImportOptions& o) {
  const std::string whole = text_of(workloads::import_kineto(workloads::read_kineto_trace(path), o));
  int streamed = 0;
  for (std::int64_t batch : {1, 3, 1'000'000}) {
    CAPTURE(path);
    CAPTURE(batch);
    if (const auto r = import_kineto_streamed(path, o, batch)) {
      CHECK(text_of(*r) == whole);
      ++streamed;
    }
  }
  return streamed;
}

}  // namespace

TEST_CASE("kineto stream: every batch size gives the whole import's profile and report") {
  const std::vector<KinetoImportOptions> options{{}, {.steps = 1}, {.keep_gaps = true}, {.steps = 5}};
  for (const auto& o : options) {
    CHECK(check_streamed(kineto_data("single_gpu.json"), o) == 3);
    CHECK(check_streamed(kineto_data("ddp_rank0.json"), o) == 3);
    CHECK(check_streamed(kineto_data("ddp_rank1.json"), o) == 3);
  }
}

TEST_CASE("kineto stream: traces it cannot stream go to the whole import, which reports them") {
  // No ProfilerStep annotation: one iteration of the whole trace.
  const std::string text = read_whole_file(kineto_data("single_gpu.json"));
  const TempFile plain(
      "stream_plain.json",
      replace_nth(replace_nth(replace_nth(text, "ProfilerStep#", "Step#", 0), "ProfilerStep#", "Step#", 0),
                  "ProfilerStep#", "Step#", 0));
  CHECK_FALSE(import_kineto_streamed(plain.path, {}, 1));
  // Time reversed: the whole import's error, with the activity it names.
  CHECK_FALSE(import_kineto_streamed(kineto_data("time_reversed.json"), {}, 1));
  // Errors of the file itself come from the first pass, as the whole import gives them.
  CHECK_THROWS_AS(import_kineto_streamed(kineto_data("negative_dur.json"), {}, 1), InputError);
  CHECK_THROWS_AS(import_kineto_streamed(kineto_data("single_gpu.json"), {.device = 7}, 1), InputError);
}
