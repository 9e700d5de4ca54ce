#include "analysis/import/import_replay.h"

#include <cmath>
#include <iostream>

#include "analysis/output/atomic_file.h"
#include "analysis/output/format_fixed.h"
#include "analysis/step/step_runner.h"
#include "workloads/profile/profile_io.h"

namespace hybridsim::analysis {
namespace {

std::string percent(double x) { return format_fixed(x, 2) + "%"; }

// (replay − measured) / measured, in percent.
double off_by(sim::Time replay, sim::Time measured) {
  return measured > sim::Time::zero() ? 100.0 * (replay - measured).to_seconds() / measured.to_seconds()
                                      : 0.0;
}

}  // namespace

std::string kineto_replay_report(const workloads::KinetoImport& imported, bool keep_gaps) {
  const StepResult replay = simulate_on_one_gpu(imported.profile);
  const sim::Time span = imported.report.average.span;
  const double off = off_by(replay.step_time, span);
  std::string report = workloads::describe_kineto_import(imported);
  report += "replay on one simulated GPU: " + sim::format_time(replay.step_time) + " (compute " +
            sim::format_time(replay.mean.compute) + ", idle " + sim::format_time(replay.mean.idle) +
            ") against the measured " + sim::format_time(span) + " (" + percent(off) +
            (keep_gaps ? ", gaps kept as idle" : ", gaps dropped") +
            (std::abs(off) <= 5.0 ? "; within 5%" : "; MORE than 5% off") + ")\n";
  if (imported.report.world_size.value_or(1) > 1)
    report += "(a multi-GPU trace: the span also holds exposed communication, which replay on one "
              "GPU leaves out; replay it with dp = " +
              std::to_string(*imported.report.world_size) + " instead)\n";
  return report;
}

std::string pipedream_replay_report(const workloads::PipeDreamImport& imported, bool corrected) {
  // Against the graph's summed times: forward and backward of every node but the inputs, as
  // recorded, plus the optimizer if one was given.
  const StepResult replay = simulate_on_one_gpu(imported.profile);
  const workloads::PipeDreamImportReport& r = imported.report;
  const sim::Time optimizer = imported.profile.optimizer_time(1);
  const sim::Time summed = r.forward_recorded + r.backward_recorded + optimizer;
  const double off = off_by(replay.step_time, summed);
  std::string report = workloads::describe_pipedream_import(imported);
  report += "replay on one simulated GPU: " + sim::format_time(replay.step_time) +
            " against the graph's summed times " + sim::format_time(summed) + " (forward " +
            sim::format_time(r.forward_recorded) + " + backward " + sim::format_time(r.backward_recorded) +
            (optimizer > sim::Time::zero() ? " + optimizer " + sim::format_time(optimizer) : "") + "; " +
            percent(off) +
            (corrected                    ? ", from --correct"
             : replay.step_time == summed ? ", exact"
                                          : "") +
            ")\n";
  return report;
}

void emit_imported_profile(const workloads::Profile& profile, const std::string& report,
                           const std::string& out) {
  const std::string yaml = workloads::profile_to_yaml(profile);
  if (out.empty()) {
    std::cout << yaml;
    std::cerr << report;
    return;
  }
  AtomicFile file(out);
  file.write(yaml);
  file.commit();
  std::cout << report << "profile written to " << out << "\n";
}

}  // namespace hybridsim::analysis
