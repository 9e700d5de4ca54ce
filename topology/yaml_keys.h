// Small pieces shared by the hand-written YAML readers (topology files here, study files in
// analysis/): a declared key, where a node stands in its file, and the list of declared keys.
//   constexpr YamlKey kKeys[] = {{"name", true, "a name"}};
//   yaml_where("t.yaml", node) == "t.yaml:3:7";  yaml_key_names(kKeys) == "name"
#pragma once
#include <yaml-cpp/yaml.h>

#include <span>
#include <string>
#include <string_view>

namespace hybridsim::topology {

// One YAML key declared once: its name, whether it is required, and what it expects (for errors).
struct YamlKey {
  std::string_view name;
  bool required;
  std::string_view expects;
};

// "source:line:column" of a node (1-based), or just the source when the node has no mark.
inline std::string yaml_where(const std::string& source, const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  if (m.is_null() || m.line < 0) return source;
  return source + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

// The declared names, comma-separated, in declaration order.
inline std::string yaml_key_names(std::span<const YamlKey> keys) {
  std::string out;
  for (const auto& k : keys) out += (out.empty() ? "" : ", ") + std::string(k.name);
  return out;
}

// The declared key called `name`, or nullptr.
inline const YamlKey* find_yaml_key(std::span<const YamlKey> keys, std::string_view name) {
  for (const auto& k : keys)
    if (k.name == name) return &k;
  return nullptr;
}

}  // namespace hybridsim::topology
