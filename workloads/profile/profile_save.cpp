// The canonical YAML writer of profiles: fixed key order, one line per op field, kernels as flow
// lists, exact units. Same profile → same bytes, and parse_profile reads it back to an equal value.
#include <ostream>
#include <sstream>

#include "workloads/profile/profile_io.h"

namespace hybridsim::workloads {

namespace {

bool is_plain_char(char c, bool first) {
  const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  if (first) return alnum || c == '_';
  return alnum || c == '_' || c == '.' || c == '-' || c == '/' || c == '+';
}

// A plain scalar when that is unambiguous in block and flow context, else a double-quoted one.
std::string scalar(std::string_view s) {
  bool plain = !s.empty() && s != "null" && s != "Null" && s != "NULL";
  for (std::size_t i = 0; plain && i < s.size(); ++i) plain = is_plain_char(s[i], i == 0);
  if (plain) return std::string(s);
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default: out += c;
    }
  }
  return out + "\"";
}

// Sizes as plain byte counts ("524288 B"): exact, greppable, and parameters = bytes / 4 at a glance.
std::string bytes(sim::Bytes b) { return std::to_string(b.count()) + " B"; }

void write_kernels(std::ostream& out, const char* key, const std::vector<Kernel>& kernels) {
  out << "    " << key << ": [";
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    out << (i ? ", " : "") << "{name: " << scalar(kernels[i].name)
        << ", duration: " << sim::format_time(kernels[i].duration);
    if (kernels[i].idle_before != sim::Time::zero())
      out << ", idle_before: " << sim::format_time(kernels[i].idle_before);
    if (kernels[i].bound == sim::KernelBound::Memory) out << ", bound: memory";
    out << "}";
  }
  out << "]\n";
}

void write_op(std::ostream& out, const Profile& p, const Op& op) {
  out << "  - name: " << scalar(op.name) << "\n";
  if (op.layer != op.name) out << "    layer: " << scalar(op.layer) << "\n";
  if (op.step) out << "    step: " << *op.step << "\n";
  if (!op.inputs.empty()) {
    out << "    inputs: [";
    for (std::size_t i = 0; i < op.inputs.size(); ++i) {
      out << (i ? ", " : "") << scalar(p.ops.at(op.inputs[i]).name);
    }
    out << "]\n";
  }
  if (op.activation_bytes.count() != 0) {
    out << "    activation: " << bytes(op.activation_bytes) << "\n";
  }
  write_kernels(out, "forward", op.forward);
  write_kernels(out, "backward", op.backward);
  if (op.has_gradient()) {
    out << "    gradient: {bytes: " << bytes(op.gradient_bytes)
        << ", exchange: " << gradient_exchange_name(op.exchange);
    if (op.exchange == GradientExchange::SparseAllGather) {
      out << ", sparse_bytes_per_worker: " << bytes(op.sparse_bytes_per_worker);
    }
    if (!op.buckets.empty()) {
      out << ", buckets: [";
      for (std::size_t i = 0; i < op.buckets.size(); ++i) out << (i ? ", " : "") << bytes(op.buckets[i]);
      out << "]";
    }
    out << "}\n";
  }
}

}  // namespace

void save_profile(const Profile& p, std::ostream& out) {
  const ProfileMetadata& m = p.meta;
  out << "# hybridsim training-step profile; the format is documented in workloads/README.md\n";
  out << "format: " << kProfileFormat << "\n";
  out << "metadata:\n";
  out << "  network: " << scalar(m.network) << "\n";
  out << "  gpu: " << scalar(m.gpu) << "\n";
  out << "  precision: " << scalar(m.precision) << "\n";
  out << "  batch_per_gpu: " << m.batch_per_gpu << "\n";
  if (m.sequence_length != 0) out << "  sequence_length: " << m.sequence_length << "\n";
  if (m.target_length != 0) out << "  target_length: " << m.target_length << "\n";
  out << "  throughput_unit: " << scalar(m.throughput_unit) << "\n";
  out << "  units_per_step: " << m.units_per_step << "\n";
  if (m.measured_micro_batches != 1) out << "  measured_micro_batches: " << m.measured_micro_batches << "\n";
  if (!m.source.empty()) out << "  source: " << scalar(m.source) << "\n";
  if (!m.notes.empty()) out << "  notes: " << scalar(m.notes) << "\n";
  out << "optimizer: {name: " << scalar(p.optimizer.name)
      << ", time_per_gib: " << sim::format_time(p.optimizer.time_per_gib);
  if (p.optimizer.idle_before != sim::Time::zero())
    out << ", idle_before: " << sim::format_time(p.optimizer.idle_before);
  out << "}\n";
  out << "ops:\n";
  for (const Op& op : p.ops) write_op(out, p, op);
}

std::string profile_to_yaml(const Profile& profile) {
  std::ostringstream out;
  save_profile(profile, out);
  return out.str();
}

}  // namespace hybridsim::workloads
