#include "analysis/sweep/sweep_integrity.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include "analysis/output/csv.h"
#include "sim/error.h"
#include "sim/text.h"

namespace hybridsim::analysis {
namespace {

constexpr std::string_view kPreamble = "# hybridsim sweep ";

struct Fnv1a {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  void add(std::string_view text) {
    for (const unsigned char c : text) {
      h ^= c;
      h *= 0x100000001b3ULL;
    }
    add_separator();
  }
  void add_separator() {
    h ^= 0xff;  // a byte no text field ends with, so ("ab", "c") and ("a", "bc") differ
    h *= 0x100000001b3ULL;
  }
};

std::string read_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = text.find('\n', start);
    out.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

// What a fingerprint covers, in the caller's words: the command line's --set overrides, or the
// Python module's set= and section keywords (each an overlay of the same kind).
std::string what_changed(const OptionSpelling& spelling) {
  if (spelling.is_python())
    return "the scenario, its overlays (set=, workload=, training=, parallelism=, pipeline=), its sweep "
           "values or a profile or topology file it reads changed";
  return "the scenario, its --set overrides, its sweep values or a profile or topology file it reads changed";
}

// Where else to write: "another --out" / "another out=".
std::string another_out(const OptionSpelling& spelling) {
  return "another " + (spelling.is_python() ? spelling.name("out") + "=" : spelling.name("out"));
}

[[noreturn]] void fail(const std::filesystem::path& file, std::size_t line, const std::string& what) {
  throw InputError(file.string() + ":" + std::to_string(line) + ": " + what);
}

// Checks one row against the sweep; returns its index.
std::size_t check_row(const std::filesystem::path& file, std::size_t line_number, const std::string& line,
                      const SweepRowCheck& check, std::size_t header_fields, const SweepRows& seen) {
  const auto fields = csv_split(line);
  if (fields.size() != header_fields)
    fail(file, line_number, "a row of " + std::to_string(fields.size()) + " fields, but the header has " +
                                std::to_string(header_fields) + ": the file is damaged");
  const auto index = sim::parse_whole<std::size_t>(fields[0]);
  if (!index || *index >= check.points.size())
    fail(file, line_number, "\"" + fields[0] + "\" is not the index of a point of this sweep (0 to " +
                                std::to_string(check.points.size() - 1) + ")");
  const auto [k, n] = check.shard;
  if (static_cast<int>(*index % static_cast<std::size_t>(n)) != k - 1)
    fail(file, line_number, "point " + fields[0] + " does not belong to shard " + std::to_string(k) + "/" +
                                std::to_string(n));
  const scenarios::SweepPoint& point = check.points[*index];
  bool same = fields[1] == point.label;
  for (std::size_t a = 0; same && a < point.assignments.size(); ++a)
    same = fields[2 + a] == point.assignments[a].second;
  if (!same)
    fail(file, line_number,
         "the row of point " + fields[0] + " holds \"" + fields[1] + "\", not this sweep's \"" + point.label +
             "\"");
  if (seen.contains(*index)) fail(file, line_number, "point " + fields[0] + " appears twice");
  return *index;
}

// The columns each newer hybridsim added to a sweep's header, newest first: a header that is this
// sweep's less the first k of them was written by an older hybridsim for the same sweep.
struct AddedColumns {
  std::string_view text;   // as the header holds them, with the comma before
  std::string_view names;  // as a message lists them
};
constexpr AddedColumns kAddedColumns[] = {
    {",layers_simulated,layers,whole_model_peak_bytes,whole_model_fits",
     "layers_simulated, layers, whole_model_peak_bytes, whole_model_fits"},
    {",tp,pp,ep,zero", "tp, pp, ep, zero"},  // its mp a transformer's pp alone
    {",not_simulated", "not_simulated"},
};

// The columns a header written by an older hybridsim lacks, "a, b and c", where `header` is this
// sweep's `current` less the columns some newer versions added; nullopt for any other header.
std::optional<std::string> older_header_lacks(const std::string& header, std::string current) {
  std::string lacks;
  for (const AddedColumns& added : kAddedColumns) {
    const auto at = current.find(added.text);
    if (at == std::string::npos) return std::nullopt;
    current.erase(at, added.text.size());
    lacks += (lacks.empty() ? "" : ", ") + std::string(added.names);
    if (header == current) {
      const auto last = lacks.rfind(", ");
      return lacks.substr(0, last) + " and " + lacks.substr(last + 2);
    }
  }
  return std::nullopt;
}

SweepRows check_rows(const std::filesystem::path& file, const std::vector<std::string>& lines,
                     std::size_t first, const SweepRowCheck& check) {
  // Rows of an older version cannot be mixed with this one's: they lack columns, and their mp meant
  // another thing for a transformer. Refused, saying so, where "columns differ" sent the user
  // looking for a change in the scenario.
  if (lines.size() > first)
    if (const auto lacks = older_header_lacks(lines[first], check.header))
      fail(file, first + 1,
           "written by an older hybridsim, without the columns " + *lacks +
               (lacks->find("tp, pp") == std::string::npos
                    ? std::string()
                    : " (and with mp a transformer's pp, where it is now the GPUs of one data-parallel "
                      "worker, tp x pp)") +
               "; its rows cannot be resumed: rerun without " + check.spelling.switched_on("resume") +
               " (use " + another_out(check.spelling) + ", or remove the folder)");
  if (lines.size() <= first || lines[first] != check.header)
    fail(file, first + 1, "its columns differ from this sweep's (was the scenario changed?)");
  const std::size_t header_fields = csv_split(check.header).size();
  SweepRows rows;
  for (std::size_t i = first + 1; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    rows[check_row(file, i + 1, lines[i], check, header_fields, rows)] = lines[i];
  }
  return rows;
}

// "fingerprint" and "sweep_points" of a summary.json; nullopt fields when absent.
struct SummaryFacts {
  std::optional<std::string> fingerprint;
  std::optional<std::size_t> sweep_points;
};
SummaryFacts read_summary(const std::filesystem::path& file) {
  SummaryFacts facts;
  try {
    const auto json = nlohmann::json::parse(read_file(file));
    if (json.contains("fingerprint") && json["fingerprint"].is_string())
      facts.fingerprint = json["fingerprint"];
    if (json.contains("sweep_points") && json["sweep_points"].is_number_unsigned())
      facts.sweep_points = json["sweep_points"].get<std::size_t>();
  } catch (const nlohmann::json::exception& e) {
    throw InputError(file.string() + ": not a sweep summary (" + e.what() + ")");
  }
  return facts;
}

}  // namespace

std::string sweep_fingerprint(std::string_view scenario_text, std::span<const std::string> overrides,
                              std::span<const scenarios::SweepPoint> points,
                              std::span<const std::string> inputs) {
  Fnv1a f;
  for (const auto& text : inputs) {
    f.add(text);
    f.add_separator();
  }
  f.add(scenario_text);
  for (const auto& o : overrides) f.add(o);
  f.add_separator();
  for (const auto& p : points) {
    f.add(std::to_string(p.index));
    for (const auto& [path, value] : p.assignments) {
      f.add(path);
      f.add(value);
    }
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(f.h));
  return hex;
}

std::string partial_preamble(const std::string& fingerprint, std::size_t points) {
  return std::string(kPreamble) + fingerprint + ", " + std::to_string(points) + " points";
}

SweepRows read_partial_rows(const std::filesystem::path& file, const SweepRowCheck& check,
                            std::vector<std::string>& notes) {
  if (!std::filesystem::exists(file)) return {};
  const std::string text = read_file(file);
  std::vector<std::string> lines = lines_of(text);
  if (lines.empty()) return {};
  const std::string expected = partial_preamble(check.fingerprint, check.points.size());
  if (lines[0] != expected)
    fail(
        file, 1,
        lines[0].starts_with(kPreamble)
            ? "written by another sweep (\"" + lines[0] + "\", this one is \"" + expected +
                  "\"): " + what_changed(check.spelling) + "; resume needs the same sweep (use " +
                  another_out(check.spelling) + ", or remove the folder to start afresh)"
            : "not a points.partial.csv of hybridsim (its first line should be \"" + expected + "\")");
  // Each row is written with its line break at once, so a text that does not end in one has a
  // last row cut short by an interruption: its point runs again.
  if (!text.ends_with('\n') && lines.size() > 2) {
    notes.push_back(file.string() + ":" + std::to_string(lines.size()) +
                    ": the last row was cut short (an interrupted write); its point runs again");
    lines.pop_back();
  }
  return check_rows(file, lines, 1, check);
}

SweepRows read_finished_rows(const std::filesystem::path& dir, const SweepRowCheck& check) {
  const auto results = dir / "results.csv";
  if (!std::filesystem::exists(results)) return {};
  const auto summary = dir / "summary.json";
  const SummaryFacts facts = std::filesystem::exists(summary) ? read_summary(summary) : SummaryFacts{};
  if (!facts.fingerprint)
    throw InputError(results.string() + ": no fingerprint in " + summary.string() +
                     " to tell which sweep wrote it; resume needs one written by this version of hybridsim");
  if (*facts.fingerprint != check.fingerprint)
    throw InputError(results.string() + ": written by another sweep (fingerprint " + *facts.fingerprint +
                     ", this one is " + check.fingerprint +
                     "): " + what_changed(check.spelling) + " (use " + another_out(check.spelling) + ")");
  return check_rows(results, lines_of(read_file(results)), 0, check);
}

ShardResults read_shard_results(const std::filesystem::path& dir) {
  ShardResults shard;
  shard.directory = dir;
  const auto results = dir / "results.csv";
  const auto summary = dir / "summary.json";
  for (const auto& f : {results, summary})
    if (!std::filesystem::exists(f)) throw InputError(f.string() + ": no such file (did that shard finish?)");
  const SummaryFacts facts = read_summary(summary);
  if (!facts.fingerprint || !facts.sweep_points)
    throw InputError(summary.string() +
                     ": no fingerprint or sweep size: not written by a sweep of this version");
  shard.fingerprint = *facts.fingerprint;
  shard.sweep_points = *facts.sweep_points;
  const std::vector<std::string> lines = lines_of(read_file(results));
  if (lines.empty()) throw InputError(results.string() + ": empty (no header)");
  shard.header = lines[0];
  const std::size_t header_fields = csv_split(shard.header).size();
  for (std::size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    const auto fields = csv_split(lines[i]);
    if (fields.size() != header_fields)
      fail(results, i + 1, "a row of " + std::to_string(fields.size()) + " fields, but the header has " +
                               std::to_string(header_fields) + ": the file is damaged");
    const auto index = sim::parse_whole<std::size_t>(fields[0]);
    if (!index || *index >= shard.sweep_points)
      fail(results, i + 1, "\"" + fields[0] + "\" is not the index of a point of this sweep (0 to " +
                               std::to_string(shard.sweep_points - 1) + ")");
    if (!shard.rows.emplace(*index, lines[i]).second)
      fail(results, i + 1, "point " + fields[0] + " appears twice");
  }
  return shard;
}

std::string missing_points(const SweepRows& rows, std::size_t total) {
  std::string out;
  std::size_t listed = 0, missing = 0;
  for (std::size_t i = 0; i < total;) {
    if (rows.contains(i)) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j + 1 < total && !rows.contains(j + 1)) ++j;
    missing += j - i + 1;
    if (listed < 20)
      out += (out.empty() ? "" : ", ") + std::to_string(i) + (j > i ? "-" + std::to_string(j) : "");
    listed += j > i ? 2 : 1;
    i = j + 1;
  }
  if (listed >= 20) out += ", ...";
  return out.empty() ? out : std::to_string(missing) + " (" + out + ")";
}

}  // namespace hybridsim::analysis
