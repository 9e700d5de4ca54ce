// `hybridsim study STUDY.yaml`: the hybrid-vs-DP study (time to train at scale) and its report
// folder; `hybridsim plan`: the best dp × mp, placement, bucket size and algorithm for a model.
#include <boost/program_options.hpp>
#include <iostream>
#include <string>

#include "analysis/api/hybridsim.h"
#include "analysis/api/llm_plan.h"
#include "analysis/cli/commands.h"
#include "analysis/cli/parse_options.h"
#include "analysis/plan/llm_planner.h"
#include "sim/error.h"

namespace po = boost::program_options;

namespace hybridsim::cli {

int study_command(int argc, const char* const* argv) {
  po::options_description options(
      "hybridsim study STUDY.yaml [options]\n\n"
      "Simulates DP alone and hybrid DP x MP for each network and GPU count of the study file,\n"
      "projects time to train, prints the headline table and writes a report folder (Markdown,\n"
      "CSVs, plots). Shipped: scenarios/study/quick.yaml, scenarios/study/hybrid-vs-dp.yaml.\n\noptions");
  analysis::StudyCommandOptions o;
  std::string out, memory;
  int threads = 0;
  options.add_options()("help,h", "show this help")("study", po::value<std::string>(), "study file")(
      "out,o", po::value(&out), "report folder (overrides the file's output)")(
      "threads,j", po::value(&threads)->default_value(0), "simulations at once; 0 = the file's or all cores")(
      "memory", po::value(&memory),
      "each GPU's memory, a what-if, e.g. \"32 GiB\" (default: the preset's GPU)")(
      "max-events", po::value(&o.max_events),
      "events one step may simulate (default 2000000000; an LLM study's candidates: 20000000, as plan's "
      "for a transformer; 0 = no limit)")(
      "max-sim-memory", po::value(&o.max_sim_memory),
      "simulation state one step may hold, e.g. \"8 GiB\" (0 B or unlimited = no limit)")(
      "no-plots", "skip the gnuplot pictures")(
      "no-ib-sensitivity", "skip the faster-InfiniBand re-simulation")("quiet,q", "no progress lines");
  po::positional_options_description positional;
  positional.add("study", 1);
  po::variables_map vm;
  if (!parse_options(argc, argv, options, positional, vm)) return 0;
  if (threads < 0)
    throw InputError("--threads " + std::to_string(threads) +
                     ": expected 0 (the file's or all cores) or positive");
  if (!vm.count("study"))
    throw InputError("give a study file, e.g. hybridsim study scenarios/study/quick.yaml");
  o.scenario = vm["study"].as<std::string>();
  if (!out.empty()) o.output = out;
  if (threads > 0) o.threads = threads;
  o.plots = vm.count("no-plots") == 0;
  if (!memory.empty()) o.memory = memory;
  o.ib_sensitivity = vm.count("no-ib-sensitivity") == 0;
  o.command_line = "hybridsim study " + o.scenario.string();
  api::study(o, std::cout, vm.count("quiet") ? nullptr : &std::cerr);
  return 0;
}

namespace {

// `plan --model gpt3-175b ...`: the transformer planner (analysis/plan/llm_planner.h).
int plan_llm_command(const analysis::PlanCommandOptions& o, analysis::LlmPlanOptions llm,
                     const po::variables_map& vm, double critical, const std::string& ib,
                     const std::string& memory, int top) {
  // The 2017 networks' options, which the transformer planner has no use for: refused, not ignored.
  for (const char* name : {"objective", "variant", "show-unfit"})
    if (vm.count(name) && !vm[name].defaulted())
      throw InputError("--" + std::string(name) + ": not for a transformer (" + o.model +
                       "): it is ranked by tokens/s, or by time to train with --critical-batch TOKENS, "
                       "over the layouts that fit");
  llm.model = o.model;
  llm.gpus = o.gpus;
  if (!vm["cluster"].defaulted()) llm.cluster = o.cluster;
  if (!ib.empty()) llm.ib_bandwidth = ib;
  if (!memory.empty()) llm.memory = memory;
  if (vm.count("critical-batch")) llm.critical_batch_tokens = critical;
  llm.threads = o.threads;
  llm.max_events = o.max_events;
  llm.max_sim_memory = o.max_sim_memory;
  analysis::print_llm_plan(api::plan_llm(llm, vm.count("quiet") ? nullptr : &std::cerr), std::cout, top);
  return 0;
}

}  // namespace

int plan_command(int argc, const char* const* argv) {
  po::options_description options(
      "hybridsim plan --model NAME-or-PROFILE --gpus N [options]\n\n"
      "Searches dp x mp, the MP placement, bucket size and collective algorithm, and prints the best\n"
      "configurations with their projected time to train and why they win.\n\noptions");
  analysis::PlanCommandOptions o;
  std::string ib, memory;
  int top = 5;
  options.add_options()("help,h", "show this help")(
      "model,m", po::value(&o.model)->required(),
      "inception-v3 | gnmt | biglstm, a profile file, or a transformer (gpt3-175b, llama3-70b, ...)")(
      "gpus,g", po::value(&o.gpus)->default_value(8), "GPUs to use")(
      "cluster,c", po::value(&o.cluster)->default_value("dgx1-v100"),
      "machine preset (nodes follow from --gpus); transformers: --gpu's machine unless given, dgx-a100 "
      "with neither")("objective", po::value(&o.objective)->default_value("time-to-train"),
                      "time-to-train | throughput")(
      "variant", po::value(&o.variant)->default_value("default"), "statistical-efficiency curve variant")(
      "ib-bandwidth", po::value(&ib), "InfiniBand bandwidth, e.g. \"200 Gb/s\"")(
      "memory", po::value(&memory),
      "each GPU's memory, a what-if, e.g. \"32 GiB\" (default: the preset's GPU)")(
      "show-unfit", "also rank configurations that do not fit in memory (last, marked !)")(
      "max-events", po::value(&o.max_events),
      "events one candidate's step may simulate (default 200000000, one past it is listed as not simulated "
      "after the ranked ones; transformers: 20000000, one past it is listed by its closed form after the "
      "simulated ones, not ranked with them; 0 = no limit)")(
      "max-sim-memory", po::value(&o.max_sim_memory),
      "simulation state one step may hold, e.g. \"8 GiB\" (0 B or unlimited = no limit)")(
      "threads,j", po::value(&o.threads)->default_value(0), "simulations at once; 0 = all cores")(
      "top", po::value(&top)->default_value(5), "configurations to print")("quiet,q", "no progress lines");
  analysis::LlmPlanOptions llm;
  double critical = 0;
  options.add_options()("gpu", po::value(&llm.gpu),
                        "transformers: the GPU (a100-80gb, a100, a100-40gb, h100, h200); its machine is the "
                        "cluster unless --cluster says")(
      "global-batch", po::value(&llm.global_batch)->default_value(0),
      "transformers: sequences per optimizer step (0: the model's published batch)")(
      "critical-batch", po::value(&critical),
      "transformers: Kaplan's critical batch in tokens; ranks by time to train (else by tokens/s)")(
      "simulate", po::value(&llm.simulate)->default_value(8),
      "transformers: the best K by the closed-form estimate to simulate (0: all that fit)");
  po::variables_map vm;
  if (!parse_options(argc, argv, options, {}, vm)) return 0;
  if (o.threads < 0)
    throw InputError("--threads " + std::to_string(o.threads) + ": expected 0 (all cores) or positive");
  if (top < 1) throw InputError("--top must be at least 1, got " + std::to_string(top));
  if (!ib.empty()) o.ib_bandwidth = ib;
  if (!memory.empty()) o.memory = memory;
  o.show_unfit = vm.count("show-unfit") != 0;
  if (analysis::is_llm_plan_model(o.model)) return plan_llm_command(o, llm, vm, critical, ib, memory, top);
  // A misspelt model first: `-m llama3-8B --gpu h100` said "--gpu: transformers only".
  analysis::check_plan_model(o);
  // Given, not defaulted: --global-batch 64 or --simulate 2 on gnmt were ignored without a word.
  for (const char* name : {"gpu", "critical-batch", "global-batch", "simulate"})
    if (vm.count(name) && !vm[name].defaulted())
      throw InputError("--" + std::string(name) +
                       ": transformers only (--model gpt3-175b, llama3-70b, ...); " + o.model +
                       (name == std::string("gpu") ? " takes --cluster" : " takes none"));
  analysis::print_plan(api::plan(o, vm.count("quiet") ? nullptr : &std::cerr), std::cout, top);
  return 0;
}

}  // namespace hybridsim::cli
