#include "analysis/study/llm_study.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ostream>

#include "analysis/study/study_report.h"
#include "sim/error.h"
#include "sim/yaml/field_reader.h"
#include "sim/yaml/input_file.h"

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
    {.path = "models",
     .kind = K::List,
     .required = true,
     .type_doc = "a list of named transformers",
     .help = "gpt3-175b, llama3-70b, ... (workloads/README.md)."},
    {.path = "models[]", .kind = K::Text, .help = "A named transformer."},
    {.path = "clusters",
     .kind = K::List,
     .required = true,
     .type_doc = "a list of machine presets",
     .help = "dgx-a100, dgx-h100, hgx-h200."},
    {.path = "clusters[]", .kind = K::Text, .help = "A machine preset."},
    {.path = "gpus",
     .kind = K::List,
     .required = true,
     .type_doc = "a list of GPU counts",
     .help = "The scaling grid."},
    {.path = "gpus[]", .kind = K::Integer, .min = 8, .max = 65536, .help = "A GPU count."},
    {.path = "ib_bandwidths",
     .kind = K::List,
     .required = true,
     .type_doc = "a list of rates",
     .help = "InfiniBand per GPU; the first is the headline, the others the sensitivity."},
    {.path = "ib_bandwidths[]", .kind = K::Rate, .help = "e.g. 200 Gb/s."},
    {.path = "critical_batch_tokens",
     .kind = K::Number,
     .min = 0,
     .min_exclusive = true,
     .help = "Kaplan et al.'s critical batch in tokens (a parameter: the reference gives no figure for "
             "these models); absent: ranked by tokens/s."},
    {.path = "simulate",
     .kind = K::Integer,
     .default_text = "2",
     .min = 1,
     .max = 64,
     .help = "Candidates simulated per plan, the best by the closed-form estimate."},
    {.path = "output", .kind = K::Path, .default_text = "out/study/llm", .help = "The report folder."},
    {.path = "threads",
     .kind = K::Integer,
     .default_text = "0",
     .min = 0,
     .max = 4096,
     .help = "Simulations at once; 0: one per hardware thread."},
};
constexpr yaml::Schema kSchema{"llm study", kFields};

std::vector<std::string> texts(const yaml::FieldReader& r, const yaml::TreeNode& list,
                               const std::string& path) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < r.to_list(list, path, 1).items.size(); ++i)
    out.push_back(r.to_text(list.items[i], path + "[" + std::to_string(i) + "]"));
  return out;
}

}  // namespace

bool is_llm_study_file(const std::filesystem::path& path) {
  const std::string text = yaml::read_input_file(path.string(), "study file");
  return text.find("format: " + std::string(kLlmStudyFormat)) != std::string::npos;
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
  c.critical_batch_tokens = r.number_opt(&root, "critical_batch_tokens");
  c.simulate = static_cast<int>(r.integer(&root, "simulate"));
  c.output = r.text(&root, "output");
  c.threads = static_cast<int>(r.integer(&root, "threads"));
  return c;
}

namespace {

// The DP-heavy family: pp 1, ZeRO-3, tp up to 8 (the table's own limit). Empty when the ZeRO row is
// not enabled: the family cannot be simulated on this build.
std::string restrict_to_dp_heavy(LlmPlanRequest& r) {
  for (PlanDimension& d : r.dimensions) {
    if (d.name == "zero" && !d.enabled)
      return "needs parallelism.zero (not in the scenario loader on this build)";
    if (d.name == "zero") d.values = [](const LlmSpace&) { return std::vector<std::string>{"3"}; };
    if (d.name == "pp" || d.name == "schedule" || d.name == "virtual_stages") d.enabled = false;
  }
  return {};
}

std::optional<LlmPlanCandidate> best_of(const LlmPlanRequest& r, std::string& note, StepCache& cache) {
  try {
    LlmPlanResult p = plan_llm(r, &cache);
    return p.ranked.front();
  } catch (const InputError& e) {
    note = e.what();
    return std::nullopt;
  }
}

}  // namespace

LlmStudyResult run_llm_study(const LlmStudyConfig& c, const LlmStudyRunOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  LlmStudyResult result{.config = c};
  StepCache cache;
  for (const std::string& model : c.models)
    for (const std::string& cluster : c.clusters)
      for (const std::string& ib : c.ib_bandwidths)
        for (const int gpus : c.gpus) {
          LlmPlanOptions po{.model = model, .gpus = gpus, .cluster = cluster, .ib_bandwidth = ib};
          po.critical_batch_tokens = c.critical_batch_tokens;
          po.simulate = c.simulate;
          po.threads = o.threads.value_or(c.threads);
          LlmStudyCell cell{.model = model, .cluster = cluster, .ib = ib, .gpus = gpus};
          LlmPlanRequest three_d = make_llm_plan_request(po);
          LlmPlanRequest dp_heavy = three_d;
          cell.three_d = best_of(three_d, cell.three_d_note, cache);
          cell.dp_heavy_note = restrict_to_dp_heavy(dp_heavy);
          if (cell.dp_heavy_note.empty()) cell.dp_heavy = best_of(dp_heavy, cell.dp_heavy_note, cache);
          if (o.progress)
            *o.progress << "llm study: " << model << " " << cluster << " " << ib << " " << gpus << " GPUs\n";
          result.cells.push_back(std::move(cell));
        }
  result.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

namespace {

std::string family(const std::optional<LlmPlanCandidate>& c, const std::string& note,
                   const std::vector<PlanDimension>& dims) {
  if (!c) return note.starts_with("--memory") ? "none fits" : note.starts_with("needs") ? "n/a" : "failed";
  return format_count(std::llround(c->tokens_per_second)) + " (" + layout_label(dims, c->layout) + ")";
}

// Per model, machine and bandwidth: the first GPU count where the best 3D plan is at least 5% faster
// than the best DP-heavy one (the cells come in that order, GPU counts innermost).
void print_stops_paying(const LlmStudyResult& r, std::ostream& out) {
  for (std::size_t i = 0; i < r.cells.size(); i += r.config.gpus.size()) {
    const LlmStudyCell& head = r.cells[i];
    std::string where = "not within the grid";
    bool compared = false;
    for (std::size_t j = i; j < i + r.config.gpus.size() && j < r.cells.size(); ++j) {
      const LlmStudyCell& c = r.cells[j];
      if (!c.dp_heavy || !c.three_d) continue;
      compared = true;
      if (c.three_d->tokens_per_second >= 1.05 * c.dp_heavy->tokens_per_second) {
        where = "from " + std::to_string(c.gpus) + " GPUs";
        break;
      }
    }
    out << "DP-heavy stops paying, " << head.model << " on " << head.cluster << " at " << head.ib << ": "
        << (compared ? where : std::string("no GPU count with both families")) << "\n";
  }
}

}  // namespace

void print_llm_study(const LlmStudyResult& r, std::ostream& out) {
  const auto dims = llm_plan_dimensions();
  out << r.config.title << "\n"
      << (r.config.critical_batch_tokens
              ? "critical batch " + format_count(std::llround(*r.config.critical_batch_tokens)) + " tokens"
              : std::string(
                    "no critical batch: tokens/s (each model at its published global batch, so time to "
                    "train is tokens / (tokens/s) for both families alike)"))
      << "\n\n";
  char line[640];
  std::snprintf(line, sizeof line, "%-11s %-9s %-11s %6s  %-46s %-46s %7s\n", "model", "machine", "IB/GPU",
                "GPUs", "DP-heavy tokens/s (layout)", "3D tokens/s (layout)", "3D/DP");
  out << line;
  for (const LlmStudyCell& c : r.cells) {
    const std::string ratio =
        c.dp_heavy && c.three_d
            ? format_fixed(c.three_d->tokens_per_second / c.dp_heavy->tokens_per_second, 2)
            : "-";
    std::snprintf(line, sizeof line, "%-11s %-9s %-11s %6d  %-46s %-46s %7s\n", c.model.c_str(),
                  c.cluster.c_str(), c.ib.c_str(), c.gpus, family(c.dp_heavy, c.dp_heavy_note, dims).c_str(),
                  family(c.three_d, c.three_d_note, dims).c_str(), ratio.c_str());
    out << line;
  }
  out << "\n";
  for (const LlmStudyCell& c : r.cells) {
    if (!c.dp_heavy_note.empty() && c.gpus == r.config.gpus.front() && c.ib == r.config.ib_bandwidths.front())
      out << "DP-heavy, " << c.model << " on " << c.cluster << ": " << c.dp_heavy_note << "\n";
    if (!c.three_d_note.empty() && c.ib == r.config.ib_bandwidths.front())
      out << "3D, " << c.model << " on " << c.gpus << " GPUs of " << c.cluster << ": " << c.three_d_note
          << "\n";
  }
  print_stops_paying(r, out);
  out << "study: " << r.cells.size() << " cells in " << format_fixed(r.wall_seconds, 1) << " s\n";
}

}  // namespace hybridsim::analysis
