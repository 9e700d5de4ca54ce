// A step's size as every report gives it (analysis/step/worker_shape.h): "mp" is the GPUs of one
// data-parallel worker, so dp × mp = gpus for a 2017 network (its model-parallel ranks) and for a
// transformer (tp × pp; the step's own mp is its pp alone), and summary.json says the same.
#include <doctest/doctest.h>

#include "analysis/step/step_report.h"
#include "analysis/step/worker_shape.h"

using namespace hybridsim;

TEST_CASE("a 2017 network's worker is its model-parallel ranks, with no transformer dimensions") {
  analysis::StepResult r;
  r.dp = 4;
  r.mp = 2;
  r.gpus = 8;
  const analysis::WorkerShape w = analysis::worker_shape(r);
  CHECK(w.gpus_per_worker == 2);
  CHECK(w.dp * w.gpus_per_worker == w.gpus);
  CHECK_FALSE(w.transformer.has_value());
  const std::string json = analysis::step_summary_json(r, {});
  CHECK(json.find("\"dp\": 4, \"mp\": 2, \"tp\": null, \"pp\": null, \"ep\": null, \"zero\": null, "
                  "\"gpus\": 8") != std::string::npos);
}

TEST_CASE("a transformer's worker is tp x pp GPUs, and summary.json's mp says so") {
  // Llama-like: tp 8 within a machine, pp 4 stages, dp 2 replicas of 32 GPUs, ep 2, ZeRO 1.
  analysis::StepResult r;
  r.transformer = true;
  r.dp = 2;
  r.mp = 4;
  r.pp = 4;
  r.tp = 8;
  r.ep = 2;
  r.zero = 1;
  r.gpus = 64;
  const analysis::WorkerShape w = analysis::worker_shape(r);
  CHECK(w.gpus_per_worker == 32);
  CHECK(w.dp * w.gpus_per_worker == w.gpus);
  REQUIRE(w.transformer.has_value());
  CHECK(w.transformer->tp == 8);
  CHECK(w.transformer->pp == 4);
  CHECK(w.transformer->ep == 2);
  CHECK(w.transformer->zero == 1);
  const std::string json = analysis::step_summary_json(r, {});
  CHECK(json.find("\"dp\": 2, \"mp\": 32, \"tp\": 8, \"pp\": 4, \"ep\": 2, \"zero\": 1, \"gpus\": 64") !=
        std::string::npos);
}
