// Several steps with their own draws (analysis/step/step_series.h): the spread (mean, p95 by
// nearest rank, min, max), breakdowns averaged so that they still add up, and synchronous steps
// waiting for their slowest GPU — all derived by hand from the factors that
// workloads/program/variability.h draws.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "analysis/step/step_report.h"
#include "analysis/step/step_series.h"
#include "sim/error.h"
#include "tests/unit/toy_profile.h"
#include "topology/presets.h"

using namespace hybridsim;
using sim::Bytes;
using sim::Time;
using testing::toy_profile;

namespace {

// op0 → op1, 1 ms forward and 2 ms backward each; gradients of `grad` each (none: no all-reduce).
workloads::Profile two_ops(Bytes grad) { return testing::toy_chain(2, grad); }

analysis::StepSetup setup_of(const workloads::Profile& p, const topology::Topology& t, int dp) {
  analysis::StepSetup s;
  s.profile = &p;
  s.topology = &t;
  s.placement = workloads::place_all_on_first(p, 1);
  s.mapping = workloads::default_mapping(t, dp, 1);
  return s;
}

Time scaled(Time d, double f) { return Time::ps(std::llround(static_cast<double>(d.ps()) * f)); }

}  // namespace

TEST_CASE("step series: mean, p95 by nearest rank, min and max, and averaged parts that still add up") {
  // Steps of 1, 2, ..., 20 ms, each all compute but 1 ms of exposed communication on its one GPU.
  std::vector<analysis::StepResult> steps;
  for (int i = 1; i <= 20; ++i) {
    analysis::StepResult r;
    r.dp = 1;
    r.global_batch = 32;
    r.step_time = Time::ms(i);
    analysis::GpuStepMetrics m;
    m.gpu = 0;
    m.compute = Time::ms(i) - Time::ms(1);
    m.exposed_communication = Time::ms(1);
    r.per_gpu = {m};
    r.mean = r.critical = m;
    r.critical_path.compute = m.compute;
    r.critical_path.gradient_communication = Time::ms(1);
    r.events = 10;
    steps.push_back(r);
  }
  const analysis::StepResult c = analysis::combine_steps(steps, two_ops(Bytes()));
  // Mean 10.5 ms; the 95th percentile is the ceil(0.95 · 20) = 19th smallest: 19 ms.
  CHECK(c.step_time == Time::us(10'500));
  CHECK(c.spread.steps == 20);
  CHECK(c.spread.p95 == Time::ms(19));
  CHECK(c.spread.min == Time::ms(1));
  CHECK(c.spread.max == Time::ms(20));
  CHECK(c.per_gpu[0].compute == Time::us(9'500));
  CHECK(c.per_gpu[0].compute + c.per_gpu[0].exposed_communication + c.per_gpu[0].idle == c.step_time);
  CHECK(c.critical_path.compute + c.critical_path.gradient_communication == c.step_time);
  CHECK(c.events == 200);  // totals over the steps
  CHECK(c.samples_per_second == doctest::Approx(32 / 0.0105));
}

TEST_CASE("step series: the critical GPU is the one last most often, with its own means and count") {
  // Three steps of two GPUs: GPU 1 finishes last in steps 1 and 3, GPU 0 in step 2. The line was the
  // mean of each step's critical GPU (GPU 1, 1, 0: compute 8 ms) labelled "GPU 1", a breakdown no
  // GPU had (issue 31); it is GPU 1's own mean, and says so.
  const Time compute[3][2] = {
      {Time::ms(4), Time::ms(9)}, {Time::ms(6), Time::ms(3)}, {Time::ms(2), Time::ms(9)}};
  std::vector<analysis::StepResult> steps;
  for (const auto& step : compute) {
    analysis::StepResult r;
    r.dp = 2;
    r.global_batch = 64;
    r.step_time = std::max(step[0], step[1]);
    for (int g = 0; g < 2; ++g) {
      analysis::GpuStepMetrics m;
      m.gpu = g;
      m.finish = step[g];
      m.compute = step[g];
      m.idle = r.step_time - step[g];
      r.per_gpu.push_back(m);
    }
    r.critical = r.per_gpu[step[1] > step[0] ? 1 : 0];
    r.mean = r.per_gpu[0];
    r.critical_path.compute = r.step_time;
    steps.push_back(r);
  }
  const analysis::StepResult c = analysis::combine_steps(steps, two_ops(Bytes()));
  CHECK(c.critical.gpu == 1);
  CHECK(c.critical.compute == Time::ms(7));  // GPU 1's mean (9 + 3 + 9) / 3, not (9 + 6 + 9) / 3
  CHECK(c.critical.compute == c.per_gpu[1].compute);
  CHECK(c.critical.compute + c.critical.exposed_communication + c.critical.idle == c.step_time);
  // GPU 1 was last in two steps of three, and the line says so.
  CHECK(c.spread.critical_steps == 2);
  const std::string table = analysis::step_summary_table(c, {});
  CHECK(table.find("critical GPU 1 (in 2 of 3 steps) ") != std::string::npos);
  // summary.json holds the count the line prints (it printed the line only).
  CHECK(analysis::step_summary_json(c, {}, {}).find("\"steps\": 3, \"critical_gpu_steps\": 2,") !=
        std::string::npos);
  // A key wider than its column keeps a space before its value.
  analysis::StepResult wide = c;
  wide.critical.gpu = 12;
  wide.spread.steps = 100;
  wide.spread.critical_steps = 12;
  CHECK(analysis::step_summary_table(wide, {}).find("  critical GPU 12 (in 12 of 100 steps) compute ") !=
        std::string::npos);

  // Where one GPU is last in every step there is no "most often" to say: GPU 1, last in 3 of 3.
  steps[1] = steps[0];
  const analysis::StepResult same = analysis::combine_steps(steps, two_ops(Bytes()));
  CHECK(same.critical.gpu == 1);
  CHECK(same.spread.critical_steps == 3);
  const std::string plain = analysis::step_summary_table(same, {});
  CHECK(plain.find("critical GPU 1 ") != std::string::npos);
  CHECK(plain.find("critical GPU 1 (") == std::string::npos);
  CHECK(plain.find("most often") == std::string::npos);
  CHECK(analysis::step_summary_json(same, {}, {}).find("\"steps\": 3, \"critical_gpu_steps\": 3,") !=
        std::string::npos);
}

TEST_CASE("step series: with kernel noise, each step lasts as long as its slowest GPU") {
  // No gradients, so nothing synchronizes the two GPUs within a step: step i = the longer of the
  // two GPUs' 6 ms of kernels, each kernel scaled by its GPU's factor for step i.
  const auto p = two_ops(Bytes());
  const auto t = topology::presets::fully_connected({.gpus = 2});
  analysis::StepSetup s = setup_of(p, t, 2);
  s.variability = {.steps = 5, .seed = 11, .kernel_jitter = 0.05};
  const analysis::StepResult r = analysis::simulate_steps(s);
  std::int64_t total = 0;
  Time longest;
  for (int i = 0; i < 5; ++i) {
    const workloads::StepScales f = workloads::step_scales(s.variability, {}, {0, 1}, 32, i);
    Time step;
    for (std::size_t g = 0; g < 2; ++g)
      step = max(step, (scaled(Time::ms(1), f.compute[g]) + scaled(Time::ms(2), f.compute[g])) * 2);
    total += step.ps();
    longest = max(longest, step);
  }
  CHECK(r.step_time == Time::ps(total / 5));
  CHECK(r.spread.max == longest);
  CHECK(r.spread.p95 == longest);  // the 5th of 5
  // The same seed gives the same steps; another seed others.
  CHECK(analysis::simulate_steps(s).step_time == r.step_time);
  s.variability.seed = 12;
  CHECK(analysis::simulate_steps(s).step_time != r.step_time);
}

TEST_CASE("step series: sentence lengths scale per-sample kernels by the padded length, not the optimizer") {
  // An encoder-decoder toy (target_length > 0) with 4 MiB of gradients per op on one GPU: step i =
  // its 6 ms of kernels × the worker's length factor + the optimizer (2 × 3,906,250 ps), unscaled.
  workloads::Profile p = two_ops(Bytes::mib(4));
  p.meta.target_length = 1;
  const auto t = topology::presets::fully_connected({.gpus = 1});
  analysis::StepSetup s = setup_of(p, t, 1);
  s.variability = {.steps = 4, .seed = 3, .lengths = workloads::LengthDistribution::Wmt16EnDe};
  const workloads::LengthModel lengths = workloads::wmt16_en_de_lengths();
  std::int64_t total = 0;
  for (int i = 0; i < 4; ++i) {
    const double f = workloads::step_scales(s.variability, lengths, {0}, 32, i).sample[0];
    total += ((scaled(Time::ms(1), f) + scaled(Time::ms(2), f)) * 2 + Time::ps(7'812'500)).ps();
  }
  CHECK(analysis::simulate_steps(s).step_time == Time::ps(total / 4));
  // A profile that is not an encoder-decoder has no sentence pairs to vary.
  p.meta.target_length = 0;
  CHECK_THROWS_WITH_AS(analysis::simulate_steps(s), doctest::Contains("encoder-decoder"), InputError);
}
