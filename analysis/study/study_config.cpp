// The study file reader: a small located YAML reader (each key declared once with what it expects)
// and the resolution of network names into profiles, curves and datasets.
#include "analysis/study/study_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <span>
#include <sstream>

#include "sim/error.h"
#include "topology/preset_registry.h"
#include "topology/yaml_keys.h"
#include "workloads/profile_gen.h"
#include "workloads/profile_io.h"

namespace hybridsim::analysis {
namespace {

using Key = topology::YamlKey;
constexpr Key kTopKeys[] = {
    {"format", true, "hybridsim-study/1"},
    {"title", false, "a title for the report"},
    {"networks", true, "a list of networks: built-in names (inception-v3, gnmt, biglstm) or maps"},
    {"gpus", true, "a list of GPU counts >= 2, e.g. [8, 16, 32]"},
    {"mp", false, "a list of model-parallel worker sizes >= 2 (default [2, 4])"},
    {"cluster", false, "a map: preset, ib_bandwidth, fabric, oversubscription"},
    {"communication", false, "a map: algorithm, bucket_size, message_size"},
    {"sensitivity", false, "a map: variants, ib_factors"},
    {"output", false, "the report folder (default out/study)"},
    {"threads", false, "simulation threads, an integer >= 0 (0: one per hardware thread)"},
};
constexpr Key kNetworkKeys[] = {
    {"name", false, "a built-in profile: inception-v3, gnmt or biglstm"},
    {"profile", false, "a profile file (hybridsim-profile/1), relative to the study file"},
    {"efficiency", false, "the network whose built-in curves and dataset to use: inception-v3, gnmt, biglstm"},
    {"variant", false, "a built-in curve variant: default, optimistic, pessimistic, measured, lars_v06"},
    {"curve", false, "{e_min, b_noise, supported: [min, max]} or {table: [[batch, epochs], ...]}"},
    {"dataset_samples", false, "samples per epoch, an integer > 0"},
    {"partitioner", false, "layers, stacks or branches"},
    {"sensitivity", false, "a list of built-in curve variants, e.g. [optimistic, pessimistic]"},
};
constexpr Key kClusterKeys[] = {
    {"preset", false, "a machine preset: dgx1-v100, dgx2, nvswitch, pcie-server"},
    {"ib_bandwidth", false, "InfiniBand bandwidth per link and direction, e.g. \"100 Gb/s\""},
    {"fabric", false, "fat-tree or rail-optimized"},
    {"oversubscription", false, "a number >= 1 (1: non-blocking)"},
};
constexpr Key kCommKeys[] = {
    {"algorithm", false, "ring or hierarchical"},
    {"bucket_size", false, "gradient bucket size, e.g. \"25 MB\""},
    {"message_size", false, "collective message size, e.g. \"512 KiB\""},
};
constexpr Key kSensitivityKeys[] = {
    {"variants", false, "a list of built-in curve variants, e.g. [optimistic, pessimistic]"},
    {"ib_factors", false, "a list of InfiniBand bandwidth factors > 0, e.g. [2]"},
};
constexpr Key kCurveKeys[] = {
    {"e_min", false, "epochs at a small batch, a number > 0"},
    {"b_noise", false, "the critical batch in samples, a number > 0"},
    {"supported", false, "the supported batch range [min, max]"},
    {"table", false, "a list of [global batch, epochs] pairs"},
};

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  std::string where(const YAML::Node& n) const { return topology::yaml_where(source_, n); }
  [[noreturn]] void fail(const YAML::Node& at, const std::string& field, const std::string& what,
                         std::string_view expected) const {
    throw InputError(where(at) + ": " + field + ": " + what + "; expected " + std::string(expected));
  }
  static std::string got(const YAML::Node& n) {
    if (n.IsScalar()) return "got \"" + n.Scalar() + "\"";
    if (n.IsMap()) return "got a map";
    if (n.IsSequence()) return "got a list";
    return "got nothing";
  }

  template <std::size_t N>
  void check_keys(const YAML::Node& map, const std::string& field, const Key (&keys)[N]) const {
    const std::string all = topology::yaml_key_names(keys);
    if (!map.IsMap()) fail(map, field, got(map), "a map with keys " + all);
    for (const auto& kv : map) {
      const std::string name = kv.first.as<std::string>();
      if (!topology::find_yaml_key(keys, name))
        fail(kv.first, field, "unknown key \"" + name + "\"", "one of " + all);
    }
    for (const auto& k : keys)
      if (k.required && !map[std::string(k.name)])
        fail(map, field, "missing key \"" + std::string(k.name) + "\"", k.expects);
  }

  static std::string_view expects(std::span<const Key> keys, std::string_view name) {
    const Key* k = topology::find_yaml_key(keys, name);
    return k ? k->expects : "";
  }

  std::string text(const YAML::Node& n, const std::string& field, std::string_view expected) const {
    if (!n.IsScalar()) fail(n, field, got(n), expected);
    return n.Scalar();
  }
  std::int64_t integer(const YAML::Node& n, const std::string& field, std::int64_t min,
                       std::string_view expected) const {
    const std::string s = text(n, field, expected);
    std::size_t used = 0;
    std::int64_t v = 0;
    try {
      v = std::stoll(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != s.size() || v < min) fail(n, field, "got \"" + s + "\"", expected);
    return v;
  }
  double number(const YAML::Node& n, const std::string& field, std::string_view expected) const {
    const std::string s = text(n, field, expected);
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != s.size() || !(v > 0)) fail(n, field, "got \"" + s + "\"", expected);
    return v;
  }
  // Runs `parse` on the scalar and rethrows its InputError with the location and field.
  template <typename F>
  auto unit(const YAML::Node& n, const std::string& field, std::string_view expected, F parse) const {
    const std::string s = text(n, field, expected);
    try {
      return parse(s);
    } catch (const InputError& e) {
      fail(n, field, e.what(), expected);
    }
  }
  // Runs `f` and rethrows its InputError located at `at` (any node: a map, a list) with the field.
  template <typename F>
  auto located(const YAML::Node& at, const std::string& field, std::string_view expected, F f) const {
    try {
      return f();
    } catch (const InputError& e) {
      fail(at, field, e.what(), expected);
    }
  }
  YAML::Node list(const YAML::Node& n, const std::string& field, std::string_view expected) const {
    if (!n.IsSequence() || n.size() == 0) fail(n, field, got(n), expected);
    return n;
  }
  std::vector<int> ascending_ints(const YAML::Node& n, const std::string& field, int min,
                                  std::string_view expected) const {
    std::vector<int> out;
    for (std::size_t i = 0; i < list(n, field, expected).size(); ++i) {
      const auto v = integer(n[i], field, min, expected);
      if (v > 1'000'000) fail(n[i], field, "got \"" + n[i].Scalar() + "\" (too large)", expected);
      if (!out.empty() && v <= out.back())
        fail(n[i], field, "got " + std::to_string(v) + " after " + std::to_string(out.back()),
             "values in increasing order without repeats");
      out.push_back(static_cast<int>(v));
    }
    return out;
  }
  std::vector<std::string> words(const YAML::Node& n, const std::string& field, std::string_view expected) const {
    std::vector<std::string> out;
    if (!n.IsSequence()) fail(n, field, got(n), expected);
    for (const auto& item : n) out.push_back(text(item, field, expected));
    return out;
  }

 private:
  std::string source_;
};

StatisticalEfficiency parse_curve(const Reader& r, const YAML::Node& n, const std::string& field) {
  r.check_keys(n, field, kCurveKeys);
  if (n["table"]) {
    if (n["e_min"] || n["b_noise"] || n["supported"])
      r.fail(n, field, "both table and e_min/b_noise given", "either a table or e_min, b_noise, supported");
    const std::string f = field + ".table";
    const YAML::Node t = r.list(n["table"], f, Reader::expects(kCurveKeys, "table"));
    std::vector<BatchEpochs> points;
    for (const auto& p : t) {
      if (!p.IsSequence() || p.size() != 2) r.fail(p, f, Reader::got(p), "a pair [global batch, epochs]");
      points.push_back({r.integer(p[0], f, 1, "a global batch > 0"), r.number(p[1], f, "epochs > 0")});
    }
    try {
      return StatisticalEfficiency::table(std::move(points));
    } catch (const InputError& e) {
      r.fail(n["table"], f, e.what(), "strictly increasing batches");
    }
  }
  for (const char* k : {"e_min", "b_noise", "supported"})
    if (!n[k]) r.fail(n, field, std::string("missing key \"") + k + "\"", Reader::expects(kCurveKeys, k));
  const double e_min = r.number(n["e_min"], field + ".e_min", Reader::expects(kCurveKeys, "e_min"));
  const double b_noise = r.number(n["b_noise"], field + ".b_noise", Reader::expects(kCurveKeys, "b_noise"));
  const YAML::Node s = n["supported"];
  const std::string sf = field + ".supported";
  if (!s.IsSequence() || s.size() != 2) r.fail(s, sf, Reader::got(s), "[min, max] global batches");
  const BatchRange range{r.integer(s[0], sf, 1, "a batch >= 1"), r.integer(s[1], sf, 1, "a batch >= 1")};
  if (range.max < range.min) r.fail(s, sf, "max below min", "[min, max] with min <= max");
  return StatisticalEfficiency::parametric(e_min, b_noise, range);
}

StudyNetwork parse_network(const Reader& r, const YAML::Node& n, const std::string& field,
                           const std::vector<std::string>& sensitivity,
                           const std::filesystem::path& base_dir) {
  if (n.IsScalar()) {
    try {
      return builtin_study_network(n.Scalar(), sensitivity);
    } catch (const InputError& e) {
      r.fail(n, field, e.what(), "a built-in profile: inception-v3, gnmt or biglstm");
    }
  }
  r.check_keys(n, field, kNetworkKeys);
  if (!n["name"] == !n["profile"])
    r.fail(n, field, n["name"] ? "both name and profile given" : "neither name nor profile given",
           "exactly one of name (a built-in profile) or profile (a file)");
  auto expect = [](std::string_view k) { return Reader::expects(kNetworkKeys, k); };
  workloads::Profile profile;
  std::string profile_source;
  if (n["name"]) {
    const std::string name = r.text(n["name"], field + ".name", expect("name"));
    try {
      profile = workloads::builtin_profile(name);
    } catch (const InputError& e) {
      r.fail(n["name"], field + ".name", e.what(), expect("name"));
    }
    profile_source = "built-in (workloads/profile_gen.h)";
  } else {
    const std::filesystem::path path =
        base_dir / r.text(n["profile"], field + ".profile", expect("profile"));
    try {
      profile = workloads::load_profile(path.string());
    } catch (const InputError& e) {
      r.fail(n["profile"], field + ".profile", e.what(), expect("profile"));
    }
    profile_source = path.string();
  }
  const std::string name = profile.meta.network;
  workloads::Partitioner partitioner = workloads::default_partitioner(profile);
  if (n["partitioner"])
    partitioner = r.unit(n["partitioner"], field + ".partitioner", expect("partitioner"),
                             [](const std::string& s) { return workloads::parse_partitioner(s); });
  const std::string eff = workloads::canonical_network_name(
      n["efficiency"] ? r.text(n["efficiency"], field + ".efficiency", expect("efficiency")) : name);
  const bool custom_curve = static_cast<bool>(n["curve"]);
  if (custom_curve && n["variant"])
    r.fail(n["variant"], field + ".variant", "given with curve", "either variant or curve");
  const std::string variant = n["variant"] ? r.text(n["variant"], field + ".variant", expect("variant"))
                                           : std::string("default");
  const YAML::Node variant_at = n["variant"] ? n["variant"] : n;
  EfficiencyCurve curve =
      custom_curve ? EfficiencyCurve{eff, "custom", "Given in " + r.where(n["curve"]) + ".", false,
                                     parse_curve(r, n["curve"], field + ".curve")}
                   : r.located(variant_at, field + ".variant", expect("variant"),
                               [&] { return efficiency_curve_by_name(eff, variant); });
  // A custom curve has no built-in siblings: only variants listed on the network itself.
  std::vector<std::string> variants = custom_curve ? std::vector<std::string>{} : sensitivity;
  if (n["sensitivity"]) variants = r.words(n["sensitivity"], field + ".sensitivity", expect("sensitivity"));
  const YAML::Node vat = n["sensitivity"] ? n["sensitivity"] : n;
  std::vector<EfficiencyCurve> sensitivity_curves;
  for (const auto& v : variants)
    sensitivity_curves.push_back(r.located(vat, field + ".sensitivity", expect("sensitivity"),
                                           [&] { return efficiency_curve_by_name(eff, v); }));
  TrainingDataset dataset;
  if (n["dataset_samples"]) {
    const auto samples = r.integer(n["dataset_samples"], field + ".dataset_samples", 1, expect("dataset_samples"));
    dataset = {eff, "custom", "sample", samples, "Given in " + r.where(n["dataset_samples"]) + "."};
  } else {
    const YAML::Node at = n["efficiency"] ? n["efficiency"] : n;
    dataset = r.located(at, field + ".efficiency", "a network with a built-in dataset, or dataset_samples",
                        [&] { return training_dataset_by_name(eff); });
  }
  return StudyNetwork{.name = name,
                      .profile = std::move(profile),
                      .profile_source = std::move(profile_source),
                      .partitioner = partitioner,
                      .curve = std::move(curve),
                      .sensitivity_curves = std::move(sensitivity_curves),
                      .dataset = std::move(dataset)};
}

}  // namespace

StudyNetwork builtin_study_network(std::string_view name, const std::vector<std::string>& sensitivity) {
  workloads::Profile profile = workloads::builtin_profile(name);
  const std::string eff = workloads::canonical_network_name(profile.meta.network);
  std::vector<EfficiencyCurve> sensitivity_curves;
  for (const auto& v : sensitivity) sensitivity_curves.push_back(efficiency_curve_by_name(eff, v));
  const workloads::Partitioner partitioner = workloads::default_partitioner(profile);
  return StudyNetwork{.name = profile.meta.network,
                      .profile = std::move(profile),
                      .profile_source = "built-in (workloads/profile_gen.h)",
                      .partitioner = partitioner,
                      .curve = efficiency_curve_by_name(eff, "default"),
                      .sensitivity_curves = std::move(sensitivity_curves),
                      .dataset = training_dataset_by_name(eff)};
}

StudyConfig parse_study_config(std::string_view yaml, const std::string& source_name,
                               const std::filesystem::path& base_dir) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    throw InputError(source_name + ":" + std::to_string(e.mark.line + 1) + ":" +
                     std::to_string(e.mark.column + 1) + ": not valid YAML: " + e.msg);
  }
  const Reader r(source_name);
  r.check_keys(root, "study", kTopKeys);
  auto top = [](std::string_view k) { return Reader::expects(kTopKeys, k); };
  StudyConfig c;
  c.source = source_name;
  if (r.text(root["format"], "format", top("format")) != kStudyFormat)
    r.fail(root["format"], "format", Reader::got(root["format"]), kStudyFormat);
  if (root["title"]) c.title = r.text(root["title"], "title", top("title"));
  c.gpus = r.ascending_ints(root["gpus"], "gpus", 2, top("gpus"));
  c.mp = root["mp"] ? r.ascending_ints(root["mp"], "mp", 2, top("mp")) : std::vector<int>{2, 4};

  if (const YAML::Node cl = root["cluster"]) {
    r.check_keys(cl, "cluster", kClusterKeys);
    auto expect = [](std::string_view k) { return Reader::expects(kClusterKeys, k); };
    if (cl["preset"]) {
      c.cluster.preset = r.text(cl["preset"], "cluster.preset", expect("preset"));
      r.located(cl["preset"], "cluster.preset", expect("preset"),
                [&] { return build_cluster(c.cluster, 1, topology::ib_bandwidth_of(c.cluster)).gpus().size(); });
    }
    auto& ib = c.cluster.links[sim::LinkKind::InfiniBand].bandwidth;
    if (cl["ib_bandwidth"])
      ib = r.unit(cl["ib_bandwidth"], "cluster.ib_bandwidth", expect("ib_bandwidth"),
                  [](const std::string& s) { return sim::parse_bandwidth(s); });
    if (ib && ib->bytes_per_second() <= 0)
      r.fail(cl["ib_bandwidth"], "cluster.ib_bandwidth", "got zero", expect("ib_bandwidth"));
    if (cl["fabric"])
      c.cluster.fabric = r.unit(cl["fabric"], "cluster.fabric", expect("fabric"),
                                [](const std::string& s) { return topology::presets::parse_fabric(s); });
    if (cl["oversubscription"]) {
      c.cluster.oversubscription = r.number(cl["oversubscription"], "cluster.oversubscription", expect("oversubscription"));
      if (c.cluster.oversubscription < 1)
        r.fail(cl["oversubscription"], "cluster.oversubscription", Reader::got(cl["oversubscription"]),
               expect("oversubscription"));
    }
  }
  if (const YAML::Node cm = root["communication"]) {
    r.check_keys(cm, "communication", kCommKeys);
    auto expect = [](std::string_view k) { return Reader::expects(kCommKeys, k); };
    if (cm["algorithm"])
      c.algorithm = r.unit(cm["algorithm"], "communication.algorithm", expect("algorithm"),
                           [](const std::string& s) { return workloads::parse_algorithm(s); });
    for (const char* k : {"bucket_size", "message_size"}) {
      if (!cm[k]) continue;
      const std::string f = std::string("communication.") + k;
      const sim::Bytes b = r.unit(cm[k], f, expect(k), [](const std::string& s) { return sim::parse_bytes(s); });
      if (b.count() <= 0) r.fail(cm[k], f, Reader::got(cm[k]), "a size > 0");
      (std::string_view(k) == "bucket_size" ? c.bucket_size : c.message_size) = b;
    }
  }
  std::vector<std::string> variants{"optimistic", "pessimistic"};
  if (const YAML::Node s = root["sensitivity"]) {
    r.check_keys(s, "sensitivity", kSensitivityKeys);
    auto expect = [](std::string_view k) { return Reader::expects(kSensitivityKeys, k); };
    if (s["variants"]) variants = r.words(s["variants"], "sensitivity.variants", expect("variants"));
    if (s["ib_factors"]) {
      if (!s["ib_factors"].IsSequence()) r.fail(s["ib_factors"], "sensitivity.ib_factors", Reader::got(s["ib_factors"]), expect("ib_factors"));
      for (const auto& f : s["ib_factors"])
        c.ib_factors.push_back(r.number(f, "sensitivity.ib_factors", expect("ib_factors")));
    }
  }
  const YAML::Node nets = r.list(root["networks"], "networks", top("networks"));
  for (std::size_t i = 0; i < nets.size(); ++i) {
    c.networks.push_back(parse_network(r, nets[i], "networks[" + std::to_string(i) + "]", variants, base_dir));
    for (std::size_t j = 0; j < i; ++j)
      if (c.networks[j].name == c.networks[i].name)
        r.fail(nets[i], "networks[" + std::to_string(i) + "]", "\"" + c.networks[i].name + "\" appears twice",
               "each network once");
  }
  if (root["output"]) c.output = r.text(root["output"], "output", top("output"));
  if (root["threads"]) c.threads = static_cast<int>(r.integer(root["threads"], "threads", 0, top("threads")));
  return c;
}

StudyConfig load_study_config(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path.string() + ": cannot read the study file");
  std::stringstream text;
  text << in.rdbuf();
  return parse_study_config(text.str(), path.string(), path.parent_path());
}

}  // namespace hybridsim::analysis
