// The LLM study's second InfiniBand bandwidth is refused only where no step of any cluster crosses
// InfiniBand: every GPU count fits one machine of the smallest machine. Taking the largest, DGX-2 (16
// GPUs) beside DGX A100 (8) at 16 GPUs was refused, where 16 GPUs are two DGX A100s whose rows the
// second bandwidth changes.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "analysis/study/llm_study.h"
#include "sim/error.h"

using namespace hybridsim;

namespace {

// The config read from a file holding `clusters` and `gpus` (YAML flow lists) and two bandwidths.
analysis::LlmStudyConfig load_with(const std::string& clusters, const std::string& gpus) {
  const std::filesystem::path file = std::filesystem::temp_directory_path() /
                                     ("hybridsim-llm-study-config-" + std::to_string(getpid()) + ".yaml");
  std::ofstream(file) << "format: hybridsim-llm-study/1\nmodels: [llama3-8b]\nclusters: " << clusters
                      << "\ngpus: " << gpus << "\nib_bandwidths: [200 Gb/s, 400 Gb/s]\n";
  struct Remove {
    std::filesystem::path path;
    ~Remove() { std::filesystem::remove(path); }
  } remove{file};
  return analysis::load_llm_study_config(file);
}

}  // namespace

TEST_CASE("llm study: a second bandwidth is kept where a count spans machines of one cluster") {
  const analysis::LlmStudyConfig c = load_with("[dgx2, dgx-a100]", "[8, 16]");
  CHECK(c.ib_bandwidths.size() == 2);
  CHECK(c.clusters.size() == 2);
}

TEST_CASE("llm study: a second bandwidth is refused where every count fits the smallest machine") {
  CHECK_THROWS_WITH_AS(load_with("[dgx2, dgx-a100]", "[8]"),
                       doctest::Contains("ib_bandwidths[1]: every GPU count of the grid (up to 8) fits one "
                                         "machine of 8 GPUs"),
                       InputError);
  CHECK_THROWS_WITH_AS(load_with("[dgx2]", "[8, 16]"),
                       doctest::Contains("fits one machine of 16 GPUs, so no step crosses InfiniBand"),
                       InputError);
}
