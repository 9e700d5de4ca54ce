#include "analysis/collective/collective_report.h"

#include <algorithm>
#include <cstdio>

#include "analysis/output/format_fixed.h"
#include "analysis/output/json_text.h"
#include "analysis/output/text_table.h"
#include "sim/fast/unfolded_reason.h"
#include "sim/link.h"

namespace hybridsim::analysis {

namespace {

// Right-aligned in `width` display columns (text_table.h: it counted bytes, so a "µs" or "×" would have
// shifted its row), and one space before a value that fills or passes it: a time of 3670016007890.21
// us (a reduction at 1 B/s) ran into the type column, "float3670016007890.21".
std::string pad(const std::string& s, std::size_t width) {
  return display_columns(s) >= width ? " " + s : right_aligned(s, width);
}

std::string algorithm(const CollectiveSweepRow& r) { return row_algorithm_name(r); }
// An all-to-all's direct sends use no channel: "-" in the table (0 in the CSV and JSON).
std::string channels(const CollectiveSweepRow& r) {
  return r.op == sim::CollectiveOp::AllToAll ? "-" : std::to_string(r.channels);
}
std::string protocol(const CollectiveSweepRow& r) { return std::string(sim::protocol_name(r.protocol)); }
// nccl-tests' redop and root columns: the reducing ops sum, the others name none; only a broadcast
// has a root (rank 0 here, as nccl-tests' default -r 0), the others -1.
std::string redop(const CollectiveSweepRow& r) {
  return r.op == sim::CollectiveOp::AllReduce || r.op == sim::CollectiveOp::ReduceScatter ? "sum" : "none";
}
std::string root(const CollectiveSweepRow& r) { return r.op == sim::CollectiveOp::Broadcast ? "0" : "-1"; }
// NCCL's model of the row's algorithm × protocol as nccl-tests would report it: busbw of its time.
double model_busbw(const CollectiveSweepRow& r, double bus_factor) {
  if (!r.nccl || r.nccl->time_us <= 0) return 0;
  return static_cast<double>(r.size.count()) / (r.nccl->time_us * 1e3) * bus_factor;
}
double row_bus_factor(const CollectiveSweepRow& r) {
  return r.algbw_gb_per_s > 0 ? r.busbw_gb_per_s / r.algbw_gb_per_s : 0;
}

// How the sizes were simulated (sim/README.md, "Folding"): folded, or in full and why.
std::string simulation_note(const std::vector<CollectiveSweepRow>& rows) {
  std::size_t folded = 0, reruns = 0;
  // Rings fold onto ring positions, trees onto tree channels: the most of each, [0] rings, [1] trees.
  std::uint32_t simulated[2] = {0, 0}, ranks[2] = {0, 0};
  std::string reason;
  sim::Time bound;
  for (const auto& r : rows) {
    if (r.rerun) ++reruns;
    if (r.path.folded) {
      ++folded;
      const int k = r.path.unit == "tree channels" ? 1 : 0;
      simulated[k] = std::max(simulated[k], r.path.simulated);
      ranks[k] = std::max(ranks[k], r.path.ranks);
      bound = max(bound, r.path.bound);
    } else if (reason.empty()) {
      // An all-to-all has no shortcut to take, so its path keeps the default reason, "message by
      // message": "every rank message by message (message by message)" said nothing twice.
      reason = r.op == sim::CollectiveOp::AllToAll
                   ? "point-to-point sends between every pair: no ring or tree to fold"
                   : sim::unfolded_reason(r.path);
    }
  }
  if (folded == 0 && reruns == 0) return "# simulation: every rank message by message (" + reason + ")\n";
  std::string out = "# simulation: " + std::to_string(folded) + " of " + std::to_string(rows.size()) +
                    " sizes folded onto representative ranks";
  std::string most;
  for (int k = 0; k < 2; ++k)
    if (ranks[k] > 0)
      most += std::string(most.empty() ? "" : "; ") + "at most " + std::to_string(simulated[k]) + " of " +
              std::to_string(ranks[k]) + (k == 0 ? " ring positions" : " tree channels") + " simulated";
  if (folded > 0)
    out +=
        " (" + most + (bound > sim::Time::zero() ? ", bounded within " + sim::human_time(bound) : "") + ")";
  if (folded < rows.size())
    out += "; the others in full: " +
           (reruns > 0 ? std::string("a ring crossed a folded ring's links") : reason);
  return out + "\n";
}

}  // namespace

std::string collective_table(const std::vector<CollectiveSweepRow>& rows, const std::string& title) {
  std::string out = "# hybridsim collective: " + title + "\n#\n";
  // nccl-tests' first columns (size to busbw, its out-of-place set), then the simulator's own.
  out += "#" + pad("size", 13) + pad("count", 13) + pad("type", 7) + pad("redop", 8) + pad("root", 6) +
         pad("time", 12) + pad("algbw", 9) + pad("busbw", 9) + pad("messages", 11) + pad("algo", 16) +
         pad("proto", 7) + pad("ch", 4) + pad("nccl", 9) + "\n";
  out += "#" + pad("(B)", 13) + pad("(elements)", 13) + pad("", 7) + pad("", 8) + pad("", 6) +
         pad("(us)", 12) + pad("(GB/s)", 9) + pad("(GB/s)", 9) + pad("", 11) + pad("", 16) + pad("", 7) +
         pad("", 4) + pad("(GB/s)", 9) + "\n";
  for (const auto& r : rows) {
    out += " " + pad(std::to_string(r.size.count()), 13) + pad(std::to_string(r.count), 13) +
           pad("float", 7) + pad(redop(r), 8) + pad(root(r), 6) + pad(format_fixed(r.time.to_us(), 2), 12) +
           pad(format_fixed(r.algbw_gb_per_s, 2), 9) + pad(format_fixed(r.busbw_gb_per_s, 2), 9) +
           pad(std::to_string(r.messages), 11) + pad(algorithm(r), 16) + pad(protocol(r), 7) +
           pad(channels(r), 4) + pad(r.nccl ? format_fixed(model_busbw(r, row_bus_factor(r)), 2) : "-", 9) +
           "\n";
  }
  if (!rows.empty()) {
    double sum = 0;
    for (const auto& r : rows) sum += r.busbw_gb_per_s;
    out += "# Avg bus bandwidth    : " + format_fixed(sum / static_cast<double>(rows.size()), 3) + "\n";
    out += "# nccl: NCCL's own model (sim/nccl_model.h) of the algorithm and protocol used, as busbw\n";
    // nccl-tests times each size out of place and in place; the simulation moves the same messages
    // either way (an out-of-place all-gather's copy of a rank's own part is not modelled).
    out += "# in-place: the same time as out-of-place (the same messages move either way)\n";
    out += simulation_note(rows);
  }
  return out;
}

std::string collective_csv(const std::vector<CollectiveSweepRow>& rows) {
  std::string out =
      "size_bytes,count,time_us,algbw_gb_per_s,busbw_gb_per_s,messages,algorithm,protocol,channels,"
      "nccl_time_us,nccl_busbw_gb_per_s";
  for (int k = 0; k < sim::kLinkKindCount; ++k)
    out += ",bytes_" + std::string(sim::link_kind_name(static_cast<sim::LinkKind>(k)));
  out += "\n";
  for (const auto& r : rows) {
    out += std::to_string(r.size.count()) + "," + std::to_string(r.count) + "," +
           format_fixed(r.time.to_us(), 6) + "," + format_fixed(r.algbw_gb_per_s, 6) + "," +
           format_fixed(r.busbw_gb_per_s, 6) + "," + std::to_string(r.messages) + "," + algorithm(r) +
           "," + protocol(r) + "," + std::to_string(r.channels) + "," +
           (r.nccl ? format_fixed(r.nccl->time_us, 6) : "") + "," +
           (r.nccl ? format_fixed(model_busbw(r, row_bus_factor(r)), 6) : "");
    for (const auto& b : r.bytes_by_link_kind) out += "," + std::to_string(b.count());
    out += "\n";
  }
  return out;
}

std::string collective_json(const std::vector<CollectiveSweepRow>& rows, const std::string& title) {
  std::string out = "{\"title\": ";
  append_json_string(out, title);
  out += ", \"rows\": [";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    out += i ? ",\n  " : "\n  ";
    out += "{\"size_bytes\": " + std::to_string(r.size.count()) + ", \"count\": " +
           std::to_string(r.count) + ", \"time_us\": " + format_fixed(r.time.to_us(), 6) +
           ", \"algbw_gb_per_s\": " + format_fixed(r.algbw_gb_per_s, 6) + ", \"busbw_gb_per_s\": " +
           format_fixed(r.busbw_gb_per_s, 6) + ", \"messages\": " + std::to_string(r.messages) +
           ", \"algorithm\": \"" + algorithm(r) + "\", \"protocol\": \"" + protocol(r) +
           "\", \"channels\": " + std::to_string(r.channels) + ", \"nccl_time_us\": " +
           (r.nccl ? format_fixed(r.nccl->time_us, 6) : "null") + ", \"nccl_busbw_gb_per_s\": " +
           (r.nccl ? format_fixed(model_busbw(r, row_bus_factor(r)), 6) : "null") +
           ", \"bytes_by_link_kind\": {";
    bool first = true;
    for (int k = 0; k < sim::kLinkKindCount; ++k) {
      if (r.bytes_by_link_kind[static_cast<std::size_t>(k)].count() == 0) continue;
      out += first ? "" : ", ";
      first = false;
      append_json_string(out, sim::link_kind_name(static_cast<sim::LinkKind>(k)));
      out += ": " + std::to_string(r.bytes_by_link_kind[static_cast<std::size_t>(k)].count());
    }
    out += "}}";
  }
  out += "\n]}\n";
  return out;
}

}  // namespace hybridsim::analysis
