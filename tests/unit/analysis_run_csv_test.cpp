// A run's summary.csv holds the figures its summary.json holds (issue 31): it held the settings and
// the memory lines only, no step time, rate or count, though every shipped transformer scenario
// writes it. Each top-level number of summary.json is a row of the CSV under the same name, with the
// same text (null, a 2017 network's tp, ..., empty as in results.csv).
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <utility>

#include "analysis/run/run_outputs.h"
#include "analysis/run/scenario_run.h"
#include "analysis/step/step_report.h"
#include "scenarios/loader/resolve.h"

using namespace hybridsim;

namespace {

analysis::RunSummary summary_of(const std::string& yaml) {
  const scenarios::ResolvedScenario r = scenarios::resolve(scenarios::parse_scenario(yaml, "s.yaml"));
  return analysis::run_summary(analysis::run_scenario(r, {}), r.scenario);
}

// summary.json's `"key": value` at the top level, as written: the value up to the next ", " or line end.
std::string json_value(const std::string& json, const std::string& key) {
  const std::string quoted = "\n  \"" + key + "\": ";
  std::size_t at = json.find(quoted);
  if (at == std::string::npos) at = json.find(", \"" + key + "\": ");
  REQUIRE(at != std::string::npos);
  at = json.find("\": ", at) + 3;
  const std::size_t end = json.find_first_of(",\n", at);
  return json.substr(at, end - at);
}

}  // namespace

TEST_CASE("run summary: summary.csv holds summary.json's step figures under their names") {
  for (const char* yaml :
       {"cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\nparallelism: {dp: 2}\n",
        "cluster: {preset: dgx-h100}\nworkload: {network: llama3-8b, model: {layers_simulated: 1}}\n"
        "parallelism: {dp: 2, tp: 4}\ntraining: {micro_batch: 1, recompute: none}\n"}) {
    CAPTURE(yaml);
    const analysis::RunSummary s = summary_of(yaml);
    const std::map<std::string, std::string> csv(s.settings.begin(), s.settings.end());
    int rows = 0;
    for (const char* key :
         {"dp", "mp", "tp", "pp", "ep", "zero", "gpus", "global_batch", "step_time_us", "steps",
          "critical_gpu_steps", "p95_step_time_us", "min_step_time_us", "max_step_time_us",
          "samples_per_second", "units_per_second", "events", "messages", "collectives"}) {
      CAPTURE(key);
      REQUIRE(csv.contains(key));
      const std::string json = json_value(s.json, key);
      CHECK(csv.at(key) == (json == "null" ? "" : json));
      ++rows;
    }
    CHECK(csv.at("unit") == "tokens");
    CHECK(csv.at("step_time_us") != "0.000");
    CHECK(rows == 19);
  }
}
