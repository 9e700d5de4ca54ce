// The LLM study's file (format hybridsim-llm-study/1): its schema and its reader.
#include <algorithm>
#include <cmath>

#include "analysis/study/llm_study.h"
#include "analysis/study/study_config.h"
#include "analysis/study/study_report.h"
#include "sim/error.h"
#include "sim/yaml/field_reader.h"
#include "sim/yaml/input_file.h"
#include "sim/yaml/tree.h"
#include "topology/preset_registry.h"

namespace hybridsim::analysis {
namespace {

using K = yaml::FieldKind;

constexpr yaml::FieldSpec kFields[] = {
    {.path = "format",
     .kind = K::Text,
     .required = true,
     .type_doc = "hybridsim-llm-study/1",
     .help = "The format and its version."},
    {.path = "title", .kind = K::Text, .default_text = "\"LLMs at scale\"", .help = "The report's title."},
    yaml::required_list("models", "a list of named transformers",
                        "gpt3-175b, llama3-70b, ... (workloads/README.md)."),
    {.path = "models[]", .kind = K::Text, .help = "A named transformer."},
    yaml::required_list("clusters", "a list of machine presets",
                        "dgx-a100, dgx-h100, hgx-h200 (a NIC a GPU), or another preset that forms a cluster "
                        "(dgx1-v100: 4 NICs for 8 GPUs)."),
    {.path = "clusters[]", .kind = K::Text, .help = "A machine preset."},
    yaml::required_list("gpus", "a list of GPU counts", "The scaling grid, increasing without repeats."),
    {.path = "gpus[]", .kind = K::Integer, .min = 8, .max = 65536, .help = "A GPU count."},
    yaml::required_list(
        "ib_bandwidths", "a list of rates",
        "InfiniBand per NIC port, as cluster.links.infiniband.bandwidth sets it (the table's "
        "IB port; its IB/GPU is what that carries for a GPU: the machine's NICs, each at the "
        "lesser of its port and its PCIe link, over its GPUs); the first is the headline, the "
        "others the sensitivity (refused where every GPU count fits one machine: no step "
        "crosses InfiniBand)."),
    {.path = "ib_bandwidths[]", .kind = K::Rate, .help = "e.g. 200 Gb/s."},
    {.path = "critical_batch_tokens",
     .kind = K::List,
     .default_text = "[]",
     .type_doc = "a list of token counts",
     .help = "Kaplan et al.'s critical batch in tokens, a stated assumption varied over the list (the "
             "reference gives no figure for these models; the first is the headline); empty: tokens/s "
             "only."},
    {.path = "critical_batch_tokens[]",
     .kind = K::Number,
     .min = kCriticalBatchTokensMin,
     .max = kCriticalBatchTokensMax,
     .help = "A critical batch in tokens."},
    {.path = "simulate",
     .kind = K::Integer,
     .default_text = "2",
     .min = 1,
     .max = 64,
     .help = "Candidates simulated per plan, the best by the closed-form estimate."},
    {.path = "output", .kind = K::Path, .default_text = "out/study/llm", .help = "The report folder."},
    kStudyThreads,
};
constexpr yaml::Schema kSchema{"llm study", kFields};

std::vector<std::string> texts(const yaml::FieldReader& r, const yaml::TreeNode& list,
                               const std::string& path) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < r.to_list(list, path, 1).items.size(); ++i)
    out.push_back(r.to_text(list.items[i], path + "[" + std::to_string(i) + "]"));
  return out;
}

// "list[i]: repeats list[j] (text)": a repeated model, machine, bandwidth or critical batch gave
// the same rows and verdict lines twice.
template <class T>
void refuse_repeats(const yaml::TreeNode& list, const std::string& path, const std::vector<T>& values,
                    const std::vector<std::string>& shown) {
  for (std::size_t i = 0; i < values.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (values[i] == values[j])
        yaml::fail_at(list.items[i].where, path + "[" + std::to_string(i) + "]",
                      "repeats " + path + "[" + std::to_string(j) + "] (" + shown[i] + ")",
                      "each value once");
}

// The grid as the study reads it, located: GPU counts in increasing order ("DP-heavy stops paying
// from N" reads them so), nothing repeated, each machine a preset that forms a cluster of every GPU
// count, each bandwidth above 0, and a critical batch only for models with a published run to price.
void check_grid(const yaml::TreeNode& root, const LlmStudyConfig& c) {
  const yaml::TreeNode &models = *root.find("models"), &clusters = *root.find("clusters");
  const yaml::TreeNode &gpus = *root.find("gpus"), &ib = *root.find("ib_bandwidths");
  for (std::size_t i = 1; i < c.gpus.size(); ++i)
    if (c.gpus[i] <= c.gpus[i - 1])
      yaml::fail_at(gpus.items[i].where, "gpus[" + std::to_string(i) + "]",
                    "got " + std::to_string(c.gpus[i]) + " after " + std::to_string(c.gpus[i - 1]),
                    "GPU counts in increasing order, each once");
  refuse_repeats(models, "models", c.models, c.models);
  refuse_repeats(clusters, "clusters", c.clusters, c.clusters);
  refuse_repeats(ib, "ib_bandwidths", c.ib_bandwidths, c.ib_bandwidths);
  std::vector<std::string> crit;
  for (const double v : c.critical_batch_tokens) crit.push_back(format_count(std::llround(v)));
  if (const yaml::TreeNode* list = root.find("critical_batch_tokens"))
    refuse_repeats(*list, "critical_batch_tokens", c.critical_batch_tokens, crit);
  for (std::size_t i = 0; i < c.ib_bandwidths.size(); ++i)
    if (sim::parse_bandwidth(c.ib_bandwidths[i]).bytes_per_second() <= 0)
      yaml::fail_at(ib.items[i].where, "ib_bandwidths[" + std::to_string(i) + "]",
                    "got \"" + c.ib_bandwidths[i] + "\"", "a rate above 0");
  for (std::size_t i = 0; i < c.clusters.size(); ++i)
    for (const int n : c.gpus) {
      try {  // what each cell's planner reads: the preset, its machines for n GPUs
        make_llm_plan_request({.model = c.models.front(), .gpus = n, .cluster = c.clusters[i]});
      } catch (const InputError& e) {
        yaml::fail_at(clusters.items[i].where, "clusters[" + std::to_string(i) + "]", e.what());
      }
    }
  // A second bandwidth where every GPU count fits one machine of every cluster: no step crosses
  // InfiniBand, so its rows were the first's again, without a word (as the hybrid study's
  // cluster.ib_bandwidth there, refused). The smallest machine decides: on the others' larger ones
  // a count may fit, but on it a step crosses InfiniBand (taking the largest refused DGX-2 and
  // DGX A100 at 16 GPUs, two DGX A100s whose rows the second bandwidth changes).
  int per_machine = 0;
  for (const auto& cluster : c.clusters) {
    const int gpus = topology::gpus_per_machine({.preset = cluster});
    per_machine = per_machine == 0 ? gpus : std::min(per_machine, gpus);
  }
  if (c.ib_bandwidths.size() > 1 && c.gpus.back() <= per_machine)
    yaml::fail_at(ib.items[1].where, "ib_bandwidths[1]",
                  "every GPU count of the grid (up to " + std::to_string(c.gpus.back()) +
                      ") fits one machine of " + std::to_string(per_machine) +
                      " GPUs, so no step crosses InfiniBand: its rows would be " + "ib_bandwidths[0]'s",
                  "one bandwidth, or a GPU count above " + std::to_string(per_machine));
  for (std::size_t i = 0; i < c.models.size() && !c.critical_batch_tokens.empty(); ++i)
    if (make_llm_plan_request({.model = c.models[i], .gpus = 8}).training_tokens <= 0)
      yaml::fail_at(models.items[i].where, "models[" + std::to_string(i) + "]",
                    c.models[i] + " has no published training tokens and batch, which critical_batch_tokens "
                    "prices a batch from", "a model with a published run (gpt3-175b, llama2-*, llama3-*)");
}

}  // namespace

// By the value YAML reads (quoted, spaced or in a flow map alike; a comment is no format), and by
// its family: "hybridsim-llm-study/2" is refused by the LLM reader as a version, not by the hybrid
// study's reader as a file of unknown fields. A file that does not parse goes to the hybrid reader,
// which refuses it with the parser's words.
bool is_llm_study_file(const std::filesystem::path& path) {
  const std::string source = path.string();
  const std::string text = yaml::read_input_file(source, "study file");
  try {
    const yaml::TreeNode tree = yaml::parse_yaml_tree(text, source);
    const yaml::TreeNode* format = tree.find("format");
    const std::string_view family = kLlmStudyFormat.substr(0, kLlmStudyFormat.find('/') + 1);
    return format && format->is_scalar() && format->scalar.starts_with(family);
  } catch (const InputError&) {
    return false;
  }
}

LlmStudyConfig load_llm_study_config(const std::filesystem::path& path) {
  const std::string source = path.string();
  const yaml::TreeNode tree = yaml::parse_yaml_tree(yaml::read_input_file(source, "study file"), source);
  yaml::FieldReader r(kSchema, nullptr, source);
  const yaml::TreeNode& root = r.document(tree);
  const yaml::TreeNode& format = *root.find("format");
  if (r.to_text(format, "format") != kLlmStudyFormat)
    yaml::fail_at(format.where, "format", "got " + yaml::describe_node(format), r.expected("format"));
  LlmStudyConfig c;
  c.source = source;
  c.title = r.text(&root, "title");
  c.models = texts(r, *root.find("models"), "models");
  for (std::size_t i = 0; i < c.models.size(); ++i)
    if (!is_llm_plan_model(c.models[i]))
      yaml::fail_at(root.find("models")->items[i].where, "models[" + std::to_string(i) + "]",
                    "\"" + c.models[i] + "\" is not a named transformer", "gpt3-175b, llama3-70b, ...");
  c.clusters = texts(r, *root.find("clusters"), "clusters");
  const yaml::TreeNode& gpus = r.to_list(*root.find("gpus"), "gpus", 1);
  for (std::size_t i = 0; i < gpus.items.size(); ++i)
    c.gpus.push_back(static_cast<int>(r.to_integer(gpus.items[i], "gpus[" + std::to_string(i) + "]")));
  const yaml::TreeNode& ib = r.to_list(*root.find("ib_bandwidths"), "ib_bandwidths", 1);
  for (std::size_t i = 0; i < ib.items.size(); ++i)
    c.ib_bandwidths.push_back(
        sim::format_bandwidth(r.to_rate(ib.items[i], "ib_bandwidths[" + std::to_string(i) + "]")));
  if (const yaml::TreeNode* crit = root.find("critical_batch_tokens"))
    for (std::size_t i = 0; i < r.to_list(*crit, "critical_batch_tokens", 0).items.size(); ++i)
      c.critical_batch_tokens.push_back(
          r.to_number(crit->items[i], "critical_batch_tokens[" + std::to_string(i) + "]"));
  c.simulate = static_cast<int>(r.integer(&root, "simulate"));
  c.output = r.text(&root, "output");
  c.threads = static_cast<int>(r.integer(&root, "threads"));
  check_grid(root, c);
  return c;
}

}  // namespace hybridsim::analysis
