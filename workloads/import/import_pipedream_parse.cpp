// The reader of PipeDream's graph files: node lines and tab-indented edge lines, with file:line:col
// errors quoting the offending text; times and sizes that are no measurement (beyond 64 bits, a
// tensor over 1 TiB, sums beyond import_limits.h's limits) are errors too.
#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "sim/error.h"
#include "sim/text.h"
#include "sim/yaml/encoding.h"
#include "sim/yaml/input_file.h"
#include "workloads/import/import_limits.h"
#include "workloads/import/import_pipedream.h"

namespace hybridsim::workloads {

namespace {

constexpr std::string_view kSeparator = " -- ";

struct Line {
  const std::string& source;
  int number;
  std::string_view text;  // without the line break

  [[noreturn]] void fail(std::string_view at, const std::string& what) const {
    const auto col = at.data() >= text.data() && at.data() <= text.data() + text.size()
                         ? at.data() - text.data() + 1
                         : 1;
    throw InputError(source + ":" + std::to_string(number) + ":" + std::to_string(col) + ": " + what +
                     ", got \"" + std::string(at.empty() ? text : at) + "\"");
  }
};

// "node12" → 12.
int node_id(const Line& line, std::string_view token) {
  const std::string_view t = sim::trim(token);
  if (!t.starts_with("node") || t.size() == 4 || t.size() > 13 ||
      !std::all_of(t.begin() + 4, t.end(),
                   [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    line.fail(t, "expected a node name like node12");
  return std::stoi(std::string(t.substr(4)));
}

// "12", "0.250": digits with optional decimals (what PipeDream writes), whole when `whole_only`
// (decimals all zeros).
bool is_plain_decimal(std::string_view v, bool whole_only) {
  const auto dot = v.find('.');
  const std::string_view whole = v.substr(0, dot),
                         frac = dot == v.npos ? std::string_view{} : v.substr(dot + 1);
  auto digits = [](std::string_view d) {
    return std::all_of(d.begin(), d.end(),
                       [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  };
  if (whole.empty() || !digits(whole) || (dot != v.npos && (frac.empty() || !digits(frac)))) return false;
  return !whole_only || frac.find_first_not_of('0') == std::string_view::npos;
}

sim::Time milliseconds(const Line& line, std::string_view value) {
  if (value.starts_with('-')) line.fail(value, "a time must not be negative");
  sim::Time t;
  try {
    t = sim::parse_time(std::string(value) + " ms");
  } catch (const InputError&) {
    if (is_plain_decimal(value, false))
      line.fail(value, std::string("a time of more than 2^63 ps; expected at most ") + kMaxImportedTimeText);
    line.fail(value, "expected milliseconds (a decimal number)");
  }
  return t;
}

sim::Bytes byte_count(const Line& line, std::string_view value) {
  if (value.starts_with('-')) line.fail(value, "a size must not be negative");
  sim::Bytes b;
  bool parsed = true;
  try {
    b = sim::parse_bytes(std::string(value) + " B");
  } catch (const InputError&) {
    if (!is_plain_decimal(value, true)) line.fail(value, "expected a whole number of bytes");
    parsed = false;  // a whole number too large for 64 bits
  }
  if (!parsed || b.count() > kMaxTensorBytes)
    line.fail(value, std::string("a tensor of more than ") + kMaxTensorBytesText + "; expected at most " +
                         kMaxTensorBytesText + " (no GPU holds more)");
  return b;
}

// activation_size: "602112.000" or "[6291456.0; 131072.0; 131072.0]" (summed).
sim::Bytes activation_bytes(const Line& line, std::string_view value) {
  if (!value.starts_with('[')) return byte_count(line, value);
  if (!value.ends_with(']')) line.fail(value, "expected a list [a; b; ...] closed by ]");
  sim::Bytes total;
  std::string_view rest = value.substr(1, value.size() - 2);
  while (true) {
    const auto semi = rest.find(';');
    const std::string_view item = sim::trim(rest.substr(0, semi));
    if (item.empty()) line.fail(value, "an empty item in the list; expected byte counts separated by ;");
    total += byte_count(line, item);
    if (total.count() > kMaxTensorBytes)
      line.fail(value, std::string("outputs of more than ") + kMaxTensorBytesText +
                           " in all; expected at most " + kMaxTensorBytesText + " (no GPU holds more)");
    if (semi == std::string_view::npos) break;
    rest = rest.substr(semi + 1);
  }
  return total;
}

// What the nodes read so far add up to: each must stay within import_limits.h's limits, so that
// the importer's and the replay's sums cannot overflow.
struct GraphTotals {
  sim::Time time;  // forward + backward of every node
  sim::Bytes parameters, activations;
};

void add_to_totals(const Line& line, const PipeDreamNode& node, std::string_view values,
                   GraphTotals& totals) {
  for (const sim::Time t :
       {node.forward, node.backward}) {  // each below 2^63 ps: compared, never summed past it
    if (t > kMaxImportedTime - totals.time)
      line.fail(values, std::string("with this node the forward and backward times add up to more than ") +
                            kMaxImportedTimeText + "; expected a graph of at most that much time");
    totals.time += t;
  }
  for (const auto& [sum, add, what] : {std::tuple{&totals.parameters, node.parameters, "parameters"},
                                        std::tuple{&totals.activations, node.activation, "activations"}}) {
    if (add.count() > kMaxTensorBytes - sum->count())
      line.fail(values, std::string("with this node the ") + what + " add up to more than " +
                            kMaxTensorBytesText + "; expected at most " + kMaxTensorBytesText +
                            " (the graph was profiled on one GPU)");
    *sum += add;
  }
}

PipeDreamNode parse_node(const Line& line, GraphTotals& totals) {
  const std::string_view text = line.text;
  const auto first = text.find(kSeparator);
  const auto last = text.rfind(kSeparator);
  if (first == std::string_view::npos || last == first)
    line.fail(text, "expected a node line 'nodeN -- <module> -- forward_compute_time=<ms>, "
                    "backward_compute_time=<ms>, activation_size=<bytes>, parameter_size=<bytes>'");
  PipeDreamNode node;
  node.line = line.number;
  node.id = node_id(line, text.substr(0, first));
  node.module =
      std::string(sim::trim(text.substr(first + kSeparator.size(), last - first - kSeparator.size())));
  if (node.module.empty()) line.fail(text.substr(first), "expected a module description");
  static constexpr std::string_view kKeys[] = {"forward_compute_time", "backward_compute_time",
                                               "activation_size", "parameter_size"};
  std::set<std::string_view> seen;
  std::string_view rest = text.substr(last + kSeparator.size());
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view item = sim::trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos) line.fail(item, "expected key=value");
    const std::string_view key = sim::trim(item.substr(0, eq));
    const std::string_view value = sim::trim(item.substr(eq + 1));
    if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys))
      line.fail(key, "unknown key (expected forward_compute_time, backward_compute_time, "
                     "activation_size, parameter_size)");
    if (!seen.insert(key).second) line.fail(key, "repeated key");
    if (key == "forward_compute_time") node.forward = milliseconds(line, value);
    else if (key == "backward_compute_time") node.backward = milliseconds(line, value);
    else if (key == "activation_size") node.activation = activation_bytes(line, value);
    else node.parameters = byte_count(line, value);
  }
  for (const auto key : kKeys) {
    if (!seen.contains(key)) line.fail(text.substr(last + kSeparator.size()), "missing " + std::string(key));
  }
  add_to_totals(line, node, text.substr(last + kSeparator.size()), totals);
  return node;
}

}  // namespace

std::string PipeDreamNode::module_type() const {
  return std::string(sim::trim(std::string_view(module).substr(0, module.find('('))));
}

bool PipeDreamNode::is_input() const { return module_type().starts_with("Input"); }

PipeDreamGraph parse_pipedream_graph(std::string_view text, const std::string& source_name) {
  if (const std::string_view encoding = yaml::wide_encoding(text); !encoding.empty())
    throw InputError(source_name + ":1:1: " + std::string(encoding) +
                     " is not supported; save the file as UTF-8");
  // A UTF-8 byte-order mark (an editor's "UTF-8 with BOM") passes, as the YAML and JSON readers let it.
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  PipeDreamGraph g;
  g.source = source_name;
  std::map<int, int> line_of;  // node id → line
  struct PendingEdge {
    int from, to, line;
    std::string text;
  };
  std::vector<PendingEdge> pending;
  GraphTotals totals;
  int number = 0;
  while (!text.empty()) {
    ++number;
    const auto end = text.find('\n');
    std::string_view raw = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    if (raw.ends_with('\r')) raw.remove_suffix(1);
    const Line line{g.source, number, raw};
    if (sim::trim(raw).empty()) continue;
    if (raw.front() == '\t' || raw.front() == ' ') {
      const std::string_view body = sim::trim(raw);
      const auto sep = body.find(kSeparator);
      if (sep == std::string_view::npos || body.find(kSeparator, sep + 1) != std::string_view::npos)
        line.fail(body, "expected an edge line '<tab>nodeA -- nodeB'");
      const int from = node_id(line, body.substr(0, sep));
      const int to = node_id(line, body.substr(sep + kSeparator.size()));
      if (from == to) line.fail(body, "an edge from a node to itself");
      pending.push_back({from, to, number, std::string(body)});
      continue;
    }
    PipeDreamNode node = parse_node(line, totals);
    if (const auto [it, inserted] = line_of.try_emplace(node.id, number); !inserted)
      line.fail(
          raw.substr(0, raw.find(kSeparator)),
          "node" + std::to_string(node.id) + " is already defined on line " + std::to_string(it->second));
    g.nodes.push_back(std::move(node));
  }
  if (g.nodes.empty()) throw InputError(source_name + ": no node lines (not a PipeDream graph file?)");
  std::set<std::pair<int, int>> seen;
  for (const auto& e : pending) {
    for (const int id : {e.from, e.to}) {
      if (!line_of.contains(id))
        throw InputError(source_name + ":" + std::to_string(e.line) + ":2: node" + std::to_string(id) +
                         " is not defined in the file, got \"" + e.text + "\"");
    }
    if (seen.insert({e.from, e.to}).second) g.edges.emplace_back(e.from, e.to);
  }
  return g;
}

PipeDreamGraph load_pipedream_graph(const std::string& path) {
  return parse_pipedream_graph(yaml::read_input_file(path, "PipeDream graph file"), path);
}

}  // namespace hybridsim::workloads
