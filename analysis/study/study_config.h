// The hybrid-vs-DP study's input: which networks (built-in profiles or profile files, each with its
// statistical-efficiency curve and dataset), which GPU counts and mp values, the cluster, the
// communication settings, the sensitivity runs and where the report goes. Read from YAML (format
// hybridsim-study/1, every key declared in study_schema() and listed in analysis/README.md) with the
// located reader every YAML file shares (sim/yaml/): "file:line:col: field: what; expected ...".
//   StudyConfig c = load_study_config("scenarios/study/hybrid-vs-dp.yaml");
//   c.networks[0].profile.meta.network == "inception-v3";  c.gpus == {8, 16, ..., 1024}
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/output/option_spelling.h"
#include "analysis/study/study_steps.h"
#include "analysis/training/statistical_efficiency.h"
#include "sim/collective.h"
#include "sim/error.h"
#include "sim/yaml/schema.h"
#include "workloads/comm/comm_plan.h"
#include "workloads/generators/gpu_choice.h"
#include "workloads/memory/memory_model.h"
#include "workloads/profile/profile.h"
#include "workloads/program/placement.h"
#include "workloads/program/step_program.h"

namespace hybridsim::analysis {

// The value of the top-level `format` key of a study file.
inline constexpr std::string_view kStudyFormat = "hybridsim-study/1";
// The defaults of `title` and `output`.
inline constexpr std::string_view kDefaultStudyTitle = "Hybrid parallelism vs data parallelism, end to end";
inline constexpr std::string_view kDefaultStudyOutput = "out/study";
// `threads`, the same key in every study format (this one and analysis/study/llm_study.h's).
inline constexpr yaml::FieldSpec kStudyThreads{.path = "threads",
                                              .kind = yaml::FieldKind::Integer,
                                              .default_text = "0",
                                              .min = 0,
                                              .max = 4096,
                                              .help = "Simulations at once; 0: one per hardware thread."};

struct StudyNetwork {
  std::string name;            // as reports show it: the profile's network ("inception-v3")
  workloads::Profile profile{};  // its batch_per_gpu is the batch of one data-parallel worker
  std::string profile_source{};  // "built-in" or the profile file's path
  workloads::Partitioner partitioner = workloads::Partitioner::Layers;  // the MP placement
  EfficiencyCurve curve;                          // the headline curve
  std::vector<EfficiencyCurve> sensitivity_curves{};  // e.g. optimistic and pessimistic
  TrainingDataset dataset{};
  // networks[].communication.ddp: its framework's data-parallel wrapper (study_ddp's default).
  workloads::Ddp ddp = workloads::Ddp::Torch;
};

struct StudyConfig {
  std::string title = std::string(kDefaultStudyTitle);
  std::string source = "<memory>";  // the study file, for the report
  std::vector<StudyNetwork> networks{};
  std::vector<int> gpus;  // ascending, distinct, >= 2: the scaling grid (1 GPU is always added)
  std::vector<int> mp{};    // ascending, distinct, >= 2: the hybrid worker sizes
  ClusterSpec cluster{};
  // workload.precision and workload.gpu: the cost model of the built-in networks (nullopt: fp32 and
  // the cluster preset's GPU); a profile file must agree with what is given.
  workloads::GpuChoice gpu_choice{};
  workloads::AllReduceAlgorithm algorithm = workloads::CommOptions{}.algorithm;  // as a scenario's: auto
  std::optional<sim::Bytes> bucket_size{};  // nullopt: each network's DDP's default bucket
  sim::Bytes message_size = sim::CollectiveConfig{}.message_size;
  sim::FastPath fast_path = scenarios::kDefaultFastPath;  // communication.fast_path
  std::vector<double> ib_factors{};  // sensitivity: the cluster again with IB bandwidth × factor
  std::filesystem::path output = kDefaultStudyOutput;  // report folder
  int threads = 0;                             // 0: one per hardware thread
};

// The data-parallel wrapper of a network's framework, as workloads/README.md's assumptions table
// has it: apex for GNMT (gnmt_training_loop.md section 2), torch for the others.
workloads::Ddp study_ddp(std::string_view efficiency_network);

// A network by built-in name ("inception-v3", "gnmt", "biglstm") with its built-in curves
// ("default" plus `sensitivity` variants), dataset and default partitioner. InputError if unknown.
StudyNetwork builtin_study_network(std::string_view name,
                                   const std::vector<std::string>& sensitivity = {"optimistic",
                                                                                  "pessimistic"},
                                   const workloads::BuiltinProfileOptions& options = {});

// Parses a study; `source_name` prefixes error locations, relative profile paths are resolved
// against `base_dir`. Throws InputError "file:line:col: field: what; expected ...".
StudyConfig parse_study_config(std::string_view yaml, const std::string& source_name,
                               const std::filesystem::path& base_dir = ".");
// Reads and parses a study file (profile paths relative to the file's folder).
StudyConfig load_study_config(const std::filesystem::path& path);

// `parse(text)` for the option `option` ("memory", the command line's long name): its InputError
// names the option and its text in the user's language (`--memory "lots": bad size ...`,
// `memory='lots': bad size ...`), and so does a value of `positive(value)` false ("expected ...").
template <class Parse, class Positive>
auto option_value(const OptionSpelling& spelling, std::string_view option, const std::string& text,
                  Parse parse, Positive positive, std::string_view expected) {
  const auto where = spelling.quoted(option, text) + ": ";
  decltype(parse(text)) value;
  try {
    value = parse(text);
  } catch (const InputError& e) {
    throw InputError(where + e.what());
  }
  if (!positive(value)) throw InputError(where + "expected " + std::string(expected));
  return value;
}

// The `--memory SIZE` what-if of study and plan: each GPU's memory, "--memory 32 GiB" its source.
// InputError naming --memory (Python: memory=) for a size it cannot read ("lots") or one of 0 B.
workloads::MemoryCapacity memory_what_if(const std::string& text, const OptionSpelling& spelling = {});

// Every key of a study file: the table behind the reader and analysis/README.md's reference.
const yaml::Schema& study_schema();

}  // namespace hybridsim::analysis
