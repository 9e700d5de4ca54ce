// The scenario schema table: well-formed declarations, defaults that parse, suggestions, and the
// field reference in scenarios/README.md kept identical to the generated text.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "schema_checks.h"
#include "scenarios/loader/field_reader.h"
#include "scenarios/loader/key_binding.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/schema.h"
#include "scenarios/loader/sweep.h"
#include "sim/error.h"

using namespace hybridsim;
using namespace hybridsim::scenarios;

TEST_CASE("schema: every field is declared once, after its parent, with help") {
  test::check_well_formed(scenario_schema());
  CHECK(find_field("parallelism.placement[7].gpu") == find_field("parallelism.placement[].gpu"));
  CHECK(find_field("cluster.nodez") == nullptr);
  CHECK_THROWS_AS(field("cluster.nodez"), InternalError);
  CHECK(yaml::spec_path_of("parallelism.mapping[3][1]") == "parallelism.mapping[][]");
}

TEST_CASE("schema: every declared default is a valid value of its field") {
  test::check_defaults(scenario_schema());
  // The scenario's own reader applies them too: an empty mapping reads as the defaults.
  Provenance provenance;
  FieldReader r(provenance, "defaults");
  TreeNode empty;
  empty.kind = TreeNode::Kind::Map;
  CHECK(r.integer(&empty, "cluster.nodes") == 1);
  CHECK(r.size(&empty, "communication.message_size") == sim::Bytes::kib(512));
  CHECK(provenance.where.empty());  // nothing was written, so nothing is located
}

TEST_CASE("schema: expected texts and suggestions") {
  CHECK(expected_text(field("cluster.nodes")) == "a whole number from 1 to 8192");
  CHECK(expected_text(field("cluster.gpus_per_node")) == "auto or a whole number from 1 to 65536");
  CHECK(expected_text(field("communication.reduction_bandwidth")) ==
        "auto, off or a bandwidth such as \"25 GB/s\" or \"100 Gb/s\", > 0");
  CHECK(expected_text(field("communication.algorithm")) == "one of: auto, ring, tree, hierarchical");
  CHECK(expected_text(field("workload.compute_speed")) == "a number from 0.001 to 1000");
  CHECK(expected_text(field("cluster.oversubscription")) == "a number >= 1");
  const std::vector<std::string> names = {"nodes", "preset", "topology", "fabric"};
  CHECK(closest_match("nodez", names) == "nodes");
  CHECK_FALSE(closest_match("bandwidth", names));  // nothing close
}

TEST_CASE("schema: an unknown --set path is matched to the field meant, not to its own section") {
  std::vector<std::string> paths;
  for (const auto& f : scenario_schema())
    if (f.path.find('[') == std::string_view::npos) paths.emplace_back(f.path);
  // A spelling slip stays a spelling slip.
  CHECK(yaml::closest_path("cluster.nodez", paths) == "cluster.nodes");
  // The same name in another section, not the section the path names ("simulation").
  CHECK(yaml::closest_path("simulation.seed", paths) == "variability.seed");
  CHECK(yaml::closest_path("simulation.steps", paths) == "variability.steps");
  CHECK(yaml::closest_path("seed", paths) == "variability.seed");  // not "sweep", two edits away
  // A name cut short within its section.
  CHECK(yaml::closest_path("workload.batch", paths) == "workload.batch_per_worker");
  // Of several fields of that name, the one whose path starts most like it.
  CHECK(yaml::closest_path("cluster.links.nvlink.bandwith", paths) == "cluster.links.nvlink.bandwidth");
  CHECK_FALSE(yaml::closest_path("nonsense.key", paths));
  CHECK_FALSE(yaml::closest_path("simulation.nothing_like_it", paths));
}

TEST_CASE("schema: scenarios/README.md holds exactly the generated field reference") {
  test::check_reference_block("scenarios/README.md", schema_reference_markdown());
  // The terminal version names every field.
  const std::string plain = schema_reference_text();
  for (const auto& f : scenario_schema()) CHECK(plain.find(std::string(f.path) + "  (") != std::string::npos);
}

TEST_CASE("schema: the example scenario in scenarios/README.md is valid and sweeps 3 × 2 points") {
  std::ifstream in(std::filesystem::path(HYBRIDSIM_SOURCE_DIR) / "scenarios/README.md");
  std::ostringstream text;
  text << in.rdbuf();
  const std::string readme = text.str();
  const auto a = readme.find("```yaml\n");
  REQUIRE(a != std::string::npos);
  const auto b = readme.find("```", a + 8);
  const Scenario s = parse_scenario(readme.substr(a + 8, b - a - 8), "README.md");
  CHECK(s.parallelism.dp == 8);
  CHECK(s.cluster.links[sim::LinkKind::NVLink].latency == sim::Time::ns(700));
  CHECK(s.outputs.trace->window == sim::TimeWindow{sim::Time::zero(), sim::Time::ms(50)});
  CHECK(expand_sweep(s).size() == 6);
  CHECK(resolve(s).topology.gpus().size() == 8);
}

TEST_CASE("schema: every key is bound to its member, read and written back by the table") {
  // A key is read and written by its own binding, or by the codec of a block above it (a list's
  // items, the fields of training.efficiency): such a block codec reads and writes.
  for (const ScenarioKey& key : scenario_keys()) {
    const FieldSpec& spec = *find_field(key.spec.path);
    CAPTURE(spec.path);
    CHECK(&binding_of(spec) == &key.binding);
    const bool reads = key.binding.read != nullptr, writes = key.binding.write != nullptr;
    if (writes) CHECK(reads);
    if (spec.kind == FieldKind::Section || reads) continue;
    bool by_block = false;
    for (std::string p(spec.path); !p.empty() && !by_block;) {
      const auto cut = p.find_last_of('.');  // the parent: "a.b[]" → "a.b", "a.b" → "a"
      if (p.ends_with("[]")) p.resize(p.size() - 2);
      else p = cut == std::string::npos ? std::string() : p.substr(0, cut);
      if (const FieldSpec* parent = find_field(p))
        by_block = binding_of(*parent).read != nullptr && binding_of(*parent).write != nullptr;
    }
    CHECK(by_block);
  }
}

TEST_CASE("schema: a key's value as its binding writes it") {
  Scenario s = parse_scenario("cluster: {preset: dgx1-v100, links: {nvlink: {bandwidth: 50 GB/s}}}\n"
                              "workload: {network: gnmt}\ncommunication: {reduction_bandwidth: off}\n",
                              "k.yaml");
  CHECK(key_text(s, "communication.message_size") == "512 KiB");
  CHECK(key_text(s, "communication.reduction_bandwidth") == "off");
  CHECK(key_text(s, "communication.channels") == "auto");
  CHECK(key_text(s, "cluster.links.nvlink.bandwidth") == "50 GB/s");
  CHECK(key_text(s, "cluster.links.nvlink.latency").empty());  // not overridden
  s.communication.algorithm = workloads::AllReduceAlgorithm::Tree;
  CHECK(key_text(s, "communication.algorithm") == "tree");
  CHECK_THROWS_AS(key_text(s, "cluster"), InternalError);  // a section has no value
}

TEST_CASE("schema: a value with a leading + is refused at every kind of number, saying the sign is why") {
  // "+25 GB/s" was refused as 'got "+25 GB/s"; expected a bandwidth such as "25 GB/s" ..., > 0', which
  // it is: neither the number's parser nor the key said that the sign is what is not taken.
  const auto refusal = [](const std::string& set) {
    try {
      const std::vector<std::string> overrides{set};
      parse_scenario("cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\n", "p.yaml", overrides);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("taken");
  };
  const std::pair<const char*, const char*> kinds[] = {
      {"parallelism.dp=+8",
       "got \"+8\" (\"+8\" has a sign, which a whole number does not take: write \"8\")"},
      {"variability.kernel_jitter=+0.05",
       "got \"+0.05\" (\"+0.05\" has a sign, which a number does not take: write \"0.05\")"},
      {"communication.bucket_size=+25 MB",
       "got \"+25 MB\" (\"+25 MB\" has a sign, which a size does not take: write \"25 MB\")"},
      {"cluster.links.nvlink.bandwidth=+25 GB/s",
       "got \"+25 GB/s\" (\"+25 GB/s\" has a sign, which a bandwidth does not take: write \"25 GB/s\")"},
      {"cluster.links.nvlink.latency=+1 us",
       "got \"+1 us\" (\"+1 us\" has a sign, which a time does not take: write \"1 us\")"},
  };
  for (const auto& kind : kinds) {  // no structured binding: clang cannot capture one in INFO's lambda
    INFO(kind.first);
    CHECK(refusal(kind.first).find(kind.second) != std::string::npos);
  }
  // Without the sign each is taken.
  for (const char* set :
       {"parallelism.dp=8", "variability.kernel_jitter=0.05", "communication.bucket_size=25 MB",
        "cluster.links.nvlink.bandwidth=25 GB/s", "cluster.links.nvlink.latency=1 us"})
    CHECK(refusal(set) == "taken");
}

TEST_CASE("schema: a section's keys follow it in the table, before any other key") {
  // read_section finds a section's children in one pass over the keys after it.
  const auto fields = scenario_schema().fields();
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const std::string_view section = fields[i].path;
    bool passed = false;  // a key not below the section has come
    for (std::size_t j = i + 1; j < fields.size(); ++j) {
      const std::string_view p = fields[j].path;
      const bool below = p.size() > section.size() && p.starts_with(section) &&
                         (p[section.size()] == '.' || p[section.size()] == '[');
      CAPTURE(p);
      if (below) CHECK_FALSE(passed);
      else passed = true;
    }
  }
}
