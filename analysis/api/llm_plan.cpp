#include "analysis/api/llm_plan.h"

#include "analysis/plan/planner.h"

namespace hybridsim::api {

analysis::LlmPlanResult plan_llm(const analysis::LlmPlanOptions& options, std::ostream* progress) {
  analysis::LlmPlanRequest request = analysis::make_llm_plan_request(options);
  if (options.ib_bandwidth)
    analysis::refuse_ib_bandwidth_on_one_machine(*options.ib_bandwidth, request.cluster, request.gpus,
                                                 options.spelling);
  request.progress = progress;
  return analysis::plan_llm(request);
}

}  // namespace hybridsim::api
