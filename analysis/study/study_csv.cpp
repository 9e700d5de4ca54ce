// The study's CSV files: every simulated step, every projected configuration, the headlines and the
// efficiency curves. Plain RFC 4180 CSV with a header line; times in seconds or milliseconds as the
// column names say.
#include <cmath>
#include <set>
#include <sstream>

#include "analysis/study/study_report.h"
#include "analysis/output/csv.h"
#include "analysis/study/study_report_detail.h"

namespace hybridsim::analysis::study_detail {
namespace {

std::string num(double v, int decimals = 6) { return format_fixed(v, decimals); }
std::string ms(sim::Time t) { return num(t.to_ms(), 6); }
// Epochs, steps and times to train as run's line and a sweep's results.csv write them
// (format_fixed_nonzero): an e_min of 1e-300 wrote 0.000000 epochs in 0.000 s.
std::string ttt_num(double v, int decimals = 6) { return format_fixed_nonzero(v, decimals); }
// A whole number as before; the share of a step an epoch is when the global batch is over the dataset.
std::string steps_per_epoch(const TimeToTrain& t) {
  return t.batch_over_dataset() ? ttt_num(t.steps_per_epoch)
                                : std::to_string(std::llround(t.steps_per_epoch));
}

std::string steps_csv(const StudyResult& result) {
  std::ostringstream o;
  o << "network,gpus,dp,mp,partitioner,ib_gb_per_s,bucket_bytes,algorithm,message_bytes,global_batch,"
       "step_ms,samples_per_second,critical_compute_ms,critical_exposed_comm_ms,critical_idle_ms,"
       "mean_compute_ms,mean_exposed_comm_ms,mean_idle_ms,mp_cut_bytes,events\n";
  std::set<StepId> seen;
  for (const auto& ns : result.networks)
    for (const auto& v : ns.variants) {
      std::vector<const StudyRow*> rows{&v.baseline};
      for (const auto& r : v.mp_alone) rows.push_back(&r);
      for (const auto& r : v.rows) rows.push_back(&r);
      for (const StudyRow* r : rows) {
        const StepPoint& p = r->step;
        if (!seen.insert(p.id).second) continue;
        o << csv_field(p.label.network) << "," << p.label.gpus << "," << p.label.dp() << "," << p.label.mp
          << "," << (p.label.mp > 1 ? workloads::partitioner_name(p.label.partitioner) : "none") << ","
          << num(static_cast<double>(p.label.ib_bytes_per_second) * 1e-9, 3) << "," << p.label.bucket_bytes
          << "," << workloads::algorithm_name(p.label.algorithm) << "," << p.label.message_bytes << ","
          << p.global_batch << "," << ms(p.step_time) << ","
          << num(static_cast<double>(p.global_batch) / p.step_time.to_seconds(), 3) << ","
          << ms(p.critical.compute) << "," << ms(p.critical.exposed_communication) << ","
          << ms(p.critical.idle) << "," << ms(p.mean.compute) << "," << ms(p.mean.exposed_communication)
          << "," << ms(p.mean.idle) << "," << p.mp_cut_bytes.count() << "," << p.events << "\n";
      }
    }
  return o.str();
}

std::string ttt_csv(const StudyResult& result) {
  std::ostringstream o;
  o << "network,variant,curve,ib_factor,kind,gpus,dp,mp,global_batch,step_ms,epochs,extrapolated,"
       "steps_per_epoch,total_steps,time_to_train_s,step_speedup,e2e_speedup,peak_memory_bytes,fits_memory\n";
  for (const auto& ns : result.networks)
    for (const auto& v : ns.variants) {
      auto line = [&](const StudyRow& r, const char* kind) {
        o << csv_field(result.network(ns).name) << "," << csv_field(v.label) << ","
          << csv_field(v.curve.network + "/" + v.curve.variant) << "," << num(v.ib_factor, 3) << "," << kind
          << "," << r.gpus << "," << r.dp << "," << r.mp << "," << r.ttt.global_batch << ","
          << ms(r.step.step_time) << "," << ttt_num(r.ttt.epochs) << ","
          << (r.ttt.extrapolated ? "true" : "false") << "," << steps_per_epoch(r.ttt) << ","
          << ttt_num(r.ttt.total_steps, 3) << "," << ttt_num(r.ttt.seconds, 3) << "," << num(r.step_speedup)
          << "," << num(r.e2e_speedup) << "," << workloads::largest_peak(r.step.memory_peaks).count() << ","
          << (r.does_not_fit.empty() ? "true" : "false") << "\n";
      };
      line(v.baseline, "baseline");
      for (const auto& r : v.mp_alone) line(r, "mp-alone");
      for (const auto& r : v.rows) line(r, r.is_dp() ? "dp" : "hybrid");
    }
  return o.str();
}

const char* peak_name(DpPeak p) {
  switch (p) {
    case DpPeak::Peaked: return "peaked";
    case DpPeak::GridEdge: return "grid_edge";
    case DpPeak::MemoryEdge: return "memory_edge";
    case DpPeak::None: break;
  }
  return "none";
}

// The break-even columns of headline.csv (StudyBreakEven; empty where a figure does not exist).
std::string break_even_fields(const StudyVariant& v) {
  const StudyBreakEven& be = v.break_even;
  std::ostringstream o;
  o << peak_name(be.dp_peak) << ","
    << (be.dp_past_peak >= 0 ? std::to_string(v.row(be.dp_past_peak).gpus) : "") << ",";
  if (be.hybrid_upto_peak >= 0) {
    const StudyRow& r = v.row(be.hybrid_upto_peak);
    o << r.gpus << "," << r.dp << "," << r.mp << "," << num(be.gain_at_peak) << ",";
  } else {
    o << ",,,,";
  }
  o << (be.best_hybrid >= 0 && be.best_dp >= 0 ? num(be.step_factor) : "") << ",";
  if (be.best_dp >= 0)
    o << be.epochs_batch << "," << ttt_num(be.epochs_now) << ",";
  else
    o << ",,";
  o << (be.epochs_factor ? num(*be.epochs_factor) : "");
  return o.str();
}

std::string headline_csv(const StudyResult& result) {
  std::ostringstream o;
  o << "network,variant,ib_factor,best_dp_gpus,best_dp_s,best_hybrid_gpus,best_hybrid_dp,best_hybrid_mp,"
       "best_hybrid_s,gain_best,gain_at_max,max_gpus,crossover_gpus,extrapolated,published_gain,"
       "dp_peak,dp_past_peak_gpus,hybrid_upto_peak_gpus,hybrid_upto_peak_dp,hybrid_upto_peak_mp,gain_at_peak,"
       "break_even_step_factor,break_even_epochs_batch,epochs_at_batch,break_even_epochs_factor\n";
  for (const auto& ns : result.networks)
    for (const auto& v : ns.variants) {
      const StudyHeadline& h = v.headline;
      const auto pub = published_gain(result.network(ns).name);
      o << csv_field(result.network(ns).name) << "," << csv_field(v.label) << "," << num(v.ib_factor, 3)
        << ",";
      if (h.best_dp >= 0)
        o << v.row(h.best_dp).gpus << "," << ttt_num(v.row(h.best_dp).ttt.seconds, 3) << ",";
      else
        o << ",,";
      if (h.best_hybrid >= 0) {
        const StudyRow& r = v.row(h.best_hybrid);
        o << r.gpus << "," << r.dp << "," << r.mp << "," << ttt_num(r.ttt.seconds, 3) << ",";
      } else {
        o << ",,,,";
      }
      o << num(h.gain_best) << "," << num(h.gain_at_max) << "," << result.config.gpus.back() << ","
        << (h.crossover ? std::to_string(*h.crossover) : "") << "," << (h.extrapolated ? "true" : "false")
        << "," << (pub ? num(*pub, 3) : "") << "," << break_even_fields(v) << "\n";
    }
  return o.str();
}

std::string epochs_csv(const StudyResult& result) {
  std::ostringstream o;
  o << "network,curve,global_batch,epochs,extrapolated\n";
  for (const auto& ns : result.networks) {
    const StudyNetwork& net = result.network(ns);
    std::vector<const EfficiencyCurve*> curves{&net.curve};
    for (const auto& c : net.sensitivity_curves) curves.push_back(&c);
    const std::int64_t lo = net.profile.meta.batch_per_gpu;
    const std::int64_t hi = static_cast<std::int64_t>(result.config.gpus.back()) * lo;
    for (const EfficiencyCurve* c : curves)
      for (std::int64_t b = lo; b <= hi; b *= 2) {
        const EpochsEstimate e = c->efficiency.epochs(b);
        o << csv_field(net.name) << "," << csv_field(c->network + "/" + c->variant) << "," << b << ","
          << ttt_num(e.epochs) << "," << (e.extrapolated ? "true" : "false") << "\n";
      }
  }
  return o.str();
}

}  // namespace

std::vector<std::pair<std::string, std::string>> csv_files(const StudyResult& result) {
  return {{"steps.csv", steps_csv(result)},
          {"time_to_train.csv", ttt_csv(result)},
          {"headline.csv", headline_csv(result)},
          {"epochs.csv", epochs_csv(result)}};
}

}  // namespace hybridsim::analysis::study_detail
