// The Kineto import report as text: what was read, what one iteration measured against what the
// profile keeps, the gradient buckets, and what was skipped.
#include <sstream>

#include "workloads/import/import_kineto.h"
#include "workloads/import/import_kineto_values.h"

namespace hybridsim::workloads {

namespace {

std::string percent(sim::Time part, sim::Time whole) {
  if (whole <= sim::Time::zero()) return "";
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(2);
  s << " (" << 100.0 * part.to_seconds() / whole.to_seconds() << "% of the span)";
  return s.str();
}

void row(std::ostream& out, std::string_view label, const std::string& value) {
  out << "  " << label;
  for (std::size_t i = label.size(); i < 26; ++i) out << ' ';
  out << value << "\n";
}

}  // namespace

std::string describe_kineto_import(const KinetoImport& import) {
  const KinetoImportReport& r = import.report;
  const Profile& p = import.profile;
  const KinetoIterationStats& m = r.average;
  std::ostringstream out;
  out << "Kineto trace " << r.source << ": " << r.events_read << " events, " << r.events_kept
      << " kept, " << sim::human_bytes(sim::Bytes::of(r.bytes_read)) << " read\n";
  out << "device " << r.device << ": " << r.gpu;
  if (r.rank) out << ", rank " << *r.rank << " of " << r.world_size.value_or(0);
  out << "\niterations: ";
  const auto n = r.iteration_count;
  if (n <= 4) {
    for (std::size_t i = 0; i < r.iterations.size(); ++i) out << (i ? ", " : "") << r.iterations[i].name;
  } else {
    out << r.iterations.front().name << " .. " << r.iterations.back().name << " (" << n << ")";
  }
  out << (n > 1 ? " (averaged)\n" : "\n");
  out << "measured on the GPU (" << m.name << "):\n";
  row(out, "span", sim::format_time(m.span) + " (first activity's start to the last one's end; " +
                       std::to_string(m.activities) + " activities)");
  if (m.cpu_duration > sim::Time::zero()) row(out, "CPU ProfilerStep", sim::format_time(m.cpu_duration));
  row(out, "busy (compute)", sim::format_time(m.busy) + percent(m.busy, m.span));
  row(out, "CPU launch gaps",
      sim::format_time(m.launch_gaps) + percent(m.launch_gaps, m.span) + ", " + std::to_string(m.gap_count) +
          " gaps, largest " + sim::format_time(m.largest_gap));
  row(out, "stream overlap (clipped)", sim::format_time(m.stream_overlap));
  if (m.communication > sim::Time::zero()) {
    row(out, "NCCL kernels", sim::format_time(m.communication));
    row(out, "exposed communication",
        sim::format_time(m.exposed_communication) + percent(m.exposed_communication, m.span));
  }
  out << "profile (" << p.ops.size() << " ops, replay on one GPU = forward + backward + optimizer"
      << (p.idle_time() > sim::Time::zero() ? " + kept gaps" : "") << "):\n";
  row(out, "forward", sim::format_time(p.forward_time()));
  row(out, "backward", sim::format_time(p.backward_time()));
  row(out, "optimizer", sim::format_time(p.optimizer_time(1)) + " (" + p.optimizer.name + ")");
  if (p.idle_time() > sim::Time::zero()) row(out, "kept launch gaps (idle)", sim::format_time(p.idle_time()));
  row(out, "one-GPU step", sim::format_time(p.step_time_1gpu()) + percent(p.step_time_1gpu(), m.span));
  out << "gradients (" << r.gradient_source << "): " << sim::human_bytes(p.parameter_bytes());
  if (r.accumulate_grad_bytes.count() > 0 && r.gradient_source != "AccumulateGrad shapes")
    out << " (AccumulateGrad shapes: " << sim::human_bytes(r.accumulate_grad_bytes) << ")";
  out << "\n";
  for (std::size_t i = 0; i < r.buckets.size(); ++i) {
    const auto& b = r.buckets[i];
    const std::string group = kineto_detail::describe_group(b.group_name, b.group_ranks);
    out << "  all-reduce " << i << ": " << b.bytes.count() << " B " << b.dtype << " over " << b.group_size
        << " ranks" << (group.empty() ? "" : " (" + group + ")") << ", " << sim::format_time(b.duration)
        << ", after the backward of " << (b.op < p.ops.size() ? p.ops[b.op].name : std::string("?")) << "\n";
  }
  if (!r.skipped.empty()) {
    out << "skipped:\n";
    for (const auto& s : r.skipped) out << "  - " << s << "\n";
  }
  if (!r.notes.empty()) {
    out << "notes:\n";
    for (const auto& s : r.notes) out << "  - " << s << "\n";
  }
  return out.str();
}

}  // namespace hybridsim::workloads
