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

TEST_CASE("llm study: the file is told by its format's value as YAML reads it, not by its text") {
  // hunt6: `format: "hybridsim-llm-study/1"` (quoted) or with two spaces after the colon is the same
  // YAML value, but the study took such a file for the hybrid study and refused it with "models:
  // unknown field; expected one of: format, title, networks, ..."; a comment quoting the format
  // line made a hybrid study file an LLM one. A mistyped version reaches the LLM reader's refusal.
  const std::filesystem::path file = std::filesystem::temp_directory_path() /
                                     ("hybridsim-llm-study-format-" + std::to_string(getpid()) + ".yaml");
  struct Remove {
    std::filesystem::path path;
    ~Remove() { std::filesystem::remove(path); }
  } remove{file};
  const std::string rest =
      "\nmodels: [llama3-8b]\nclusters: [dgx-h100]\ngpus: [8]\nib_bandwidths: [400 Gb/s]\n";
  for (const std::string format : {"format: \"hybridsim-llm-study/1\"", "format: 'hybridsim-llm-study/1'",
                                   "format:   hybridsim-llm-study/1"}) {
    CAPTURE(format);
    std::ofstream(file) << format << rest;
    CHECK(analysis::is_llm_study_file(file));
    CHECK(analysis::load_llm_study_config(file).models == std::vector<std::string>{"llama3-8b"});
  }
  std::ofstream(file) << "# not format: hybridsim-llm-study/1\nformat: hybridsim-study/1\nnetworks: [gnmt]\n"
                         "gpus: [8]\n";
  CHECK_FALSE(analysis::is_llm_study_file(file));
  std::ofstream(file) << "format: hybridsim-llm-study/2" << rest;
  CHECK(analysis::is_llm_study_file(file));
  CHECK_THROWS_WITH_AS(
      analysis::load_llm_study_config(file),
      doctest::Contains("format: got \"hybridsim-llm-study/2\"; expected hybridsim-llm-study/1"), InputError);
}
