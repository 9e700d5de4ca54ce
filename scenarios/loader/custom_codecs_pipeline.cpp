// pipeline.stages: auto, or the layers of each stage (custom_codecs.h).
#include "scenarios/loader/custom_codecs.h"
#include "scenarios/loader/key_codecs.h"
#include "scenarios/loader/scenario_build.h"

namespace hybridsim::scenarios {

void read_pipeline_stages(FieldReader& r, const TreeNode* map, const FieldSpec& spec, Scenario& s) {
  const std::string path(spec.path);
  const TreeNode& stages = *r.value(map, path);
  if (r.word(stages, path) == "auto") return;
  if (!stages.is_sequence())
    fail_at(stages.where, path,
            "got " + (stages.is_scalar() ? "'" + stages.scalar + "'" : std::string("a map")),
            "auto or a list of layers per stage");
  r.to_list(stages, path, 1);
  std::vector<int> layers;
  for (std::size_t i = 0; i < stages.items.size(); ++i) {
    const std::string item = path + "[" + std::to_string(i) + "]";
    const std::int64_t n = r.to_integer(stages.items[i], item);
    if (n < 1)
      fail_at(stages.items[i].where, item, "a stage of " + std::to_string(n) + " layers", "at least 1");
    layers.push_back(static_cast<int>(n));
  }
  s.parallelism.pipeline.stages = std::move(layers);
}

std::optional<TreeNode> write_pipeline_stages(const Scenario& s, const FieldSpec&) {
  if (s.parallelism.pipeline.stages.empty()) return std::nullopt;
  std::vector<TreeNode> cells;
  for (const int n : s.parallelism.pipeline.stages) cells.push_back(scalar(std::to_string(n)));
  return sequence(std::move(cells));
}

}  // namespace hybridsim::scenarios
