// `hybridsim plan` for a named transformer (gpt3-175b, llama3-70b, mixtral-8x7b, ...): the options
// read into a request and checked in the caller's spelling (`--critical-batch` on the command line,
// `critical_batch=` in Python), then the transformer planner (analysis/plan/llm_planner.h). The
// command line and Python's plan() both call it, so that both take and refuse the same options.
//   analysis::LlmPlanOptions o;  o.model = "llama3-8b";  o.gpus = 64;  o.gpu = "h100";
//   analysis::print_llm_plan(api::plan_llm(o, &std::cerr), std::cout);
#pragma once
#include <iosfwd>

#include "analysis/plan/llm_planner.h"

namespace hybridsim::api {

// Throws InputError naming the option (in options.spelling) for what make_llm_plan_request refuses,
// and for an InfiniBand bandwidth where every candidate fits one machine. A line per simulated
// candidate goes to `progress`, if any.
analysis::LlmPlanResult plan_llm(const analysis::LlmPlanOptions& options, std::ostream* progress = nullptr);

}  // namespace hybridsim::api
