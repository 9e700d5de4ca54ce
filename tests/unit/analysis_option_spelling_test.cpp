// How refusals name the options a user gave (analysis/output/option_spelling.h): the command line's
// `--min-bytes "lots"`, the Python module's `min_bytes='lots'`, and the collective request's every
// option named through CollectiveOptionNames in either language (issue 31).
#include <doctest/doctest.h>

#include <string>

#include "analysis/api/collective_request.h"
#include "analysis/collective/collective_sweep.h"
#include "analysis/output/option_spelling.h"
#include "analysis/plan/llm_planner.h"
#include "analysis/plan/planner.h"
#include "analysis/study/study_config.h"
#include "sim/error.h"

using namespace hybridsim;
using analysis::OptionSpelling;

TEST_CASE("option spelling: the command line's options and Python's keywords, each with its value") {
  const OptionSpelling cli = OptionSpelling::command_line(), py = OptionSpelling::python();
  CHECK(cli.name("max-events") == "--max-events");
  CHECK(py.name("max-events") == "max_events");
  // Every keyword is the option's name with underscores: collective(reduction_bandwidth=...), not
  // main's reduction=, beside --reduction-bandwidth and communication.reduction_bandwidth.
  CHECK(cli.name("reduction-bandwidth") == "--reduction-bandwidth");
  CHECK(py.name("reduction-bandwidth") == "reduction_bandwidth");
  CHECK(cli.quoted("memory", "lots") == "--memory \"lots\"");
  CHECK(py.quoted("memory", "lots") == "memory='lots'");
  CHECK(cli.said("algorithm", "tree") == "--algorithm tree");
  CHECK(py.said("algorithm", "tree") == "algorithm='tree'");
  CHECK(cli.said_number("gpus", "64") == "--gpus 64");
  CHECK(py.said_number("gpus", "64") == "gpus=64");
  CHECK(cli.takes("max-events", "N") == "--max-events N");
  CHECK(py.takes("max-events", "N") == "max_events=N");
  CHECK(cli.switched_off("ib-sensitivity") == "--no-ib-sensitivity");
  CHECK(py.switched_off("ib-sensitivity") == "ib_sensitivity=False");
  // As repr() writes a str: single quotes, double ones around a text holding a single quote.
  CHECK(analysis::python_repr("it's") == "\"it's\"");
  CHECK(analysis::python_repr("a'\"b") == "'a\\'\"b'");
}

TEST_CASE("option spelling: every option of a collective request is named in the language it came in") {
  const auto py = analysis::CollectiveOptionNames::for_language(OptionSpelling::python());
  const auto cli = analysis::CollectiveOptionNames::for_language(OptionSpelling::command_line());
  CHECK(cli.said(cli.algorithm, "tree") == "--algorithm tree");
  CHECK(py.said(py.algorithm, "tree") == "algorithm='tree'");
  CHECK(py.said_number(py.channels, "3") == "channels=3");
  const std::string py_names[] = {py.algorithm,   py.protocol,      py.op,        py.gpus,
                                  py.nodes,       py.channels,      py.min_bytes, py.max_bytes,
                                  py.step_factor, py.message_size,  py.reduction, py.fast_path,
                                  py.max_events,  py.max_sim_memory};
  for (const std::string& name : py_names) CHECK(name.find("--") == std::string::npos);
  CHECK(py.reduction == "reduction_bandwidth");
  CHECK(cli.reduction == "--reduction-bandwidth");
  // A request's refusals, for each kind of field: a name, a size, a number, a limit, a budget.
  api::CollectiveRequest r{.topology = "dgx1-v100"};
  r.names = py;
  const auto refused = [](api::CollectiveRequest request) {
    try {
      api::collective(request);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("not refused");
  };
  api::CollectiveRequest bad = r;
  bad.algorithm = "x";
  CHECK(refused(bad).starts_with("algorithm='x': unknown all-reduce algorithm"));
  bad = r;
  bad.min_bytes = "lots";
  CHECK(refused(bad).starts_with("min_bytes='lots': bad size"));
  bad = r;
  bad.channels = -1;
  CHECK(refused(bad) == "channels=-1: expected 0 (automatic) or positive");
  bad = r;
  bad.max_events = "x";
  CHECK(refused(bad).starts_with("max_events='x': expected a whole number"));
  bad = r;
  bad.min_bytes = "1 MiB";
  bad.max_bytes = "4 B";
  CHECK(refused(bad) == "min_bytes='1 MiB' is above max_bytes='4 B'; expected min_bytes <= max_bytes");
  // The budget's own words: 8 B over 8 GPUs of a DGX-1 in full takes 224 events (its one channel's 112
  // messages: NCCL launches 1 of the 6 for it; 1,344 on all 6), over a cap of 10.
  bad = r;
  bad.min_bytes = bad.max_bytes = "8 B";
  bad.max_events = "10";
  bad.fast_path = "off";
  // With the figure that passes, the collective in full (it said "raise it" alone).
  CHECK(
      refused(bad).ends_with("over the limit max_events = 10; raise it to 224 or more (max_events=N, 0 = no "
                             "limit) or use fast_path='auto'"));
  // The command line's words are unchanged.
  api::CollectiveRequest cli_bad{.topology = "dgx1-v100", .algorithm = "x"};
  CHECK(refused(cli_bad).starts_with("--algorithm \"x\": unknown all-reduce algorithm"));
}

TEST_CASE("option spelling: plan's and study's options in Python's words") {
  const OptionSpelling py = OptionSpelling::python();
  CHECK_THROWS_WITH_AS(analysis::memory_what_if("lots", py), doctest::Contains("memory='lots': bad size"),
                       InputError);
  CHECK(analysis::memory_what_if("32 GiB", py).source == "memory='32 GiB'");
  CHECK(analysis::memory_what_if("32 GiB", py).origin == workloads::MemoryCapacity::Origin::Option);
  CHECK_THROWS_WITH_AS(
      analysis::limit_overlay("x", "", py),
      "max_events='x': expected a whole number of events from 0 to 1e18 (0 or unlimited: no limit)",
      InputError);
  // "unlimited" is what every command's help and refusal offers (study and plan refused it before).
  CHECK(analysis::limit_overlay("unlimited", "unlimited", py) ==
        std::vector<std::string>{"simulation.max_events=unlimited", "simulation.max_memory=unlimited"});
  CHECK_THROWS_WITH_AS(analysis::make_plan_request({.model = "gnmt", .gpus = 100000000, .spelling = py}),
                       doctest::Contains("gpus=100000000: more than 8192"), InputError);
  CHECK_THROWS_WITH_AS(analysis::make_plan_request({.model = "gnmt", .threads = -1, .spelling = py}),
                       "threads=-1: expected 0 (all cores) or positive", InputError);
  const analysis::BudgetKnobs knobs = analysis::study_budget_knobs(py);
  CHECK(knobs.events_raise == "max_events=N");
  CHECK(knobs.memory_raise == "max_sim_memory='SIZE'");
  CHECK(analysis::study_budget_knobs().events_raise == "--max-events N");
  // A transformer plan's candidates (an LLM study's, from Python) say so in the request's words too.
  CHECK(analysis::make_llm_plan_request({.model = "llama3-70b", .gpus = 64, .spelling = py})
            .budget_knobs.events_raise == "max_events=N");
  CHECK(analysis::make_llm_plan_request({.model = "llama3-70b", .gpus = 64}).budget_knobs.events_raise ==
        "--max-events N");
}

TEST_CASE("option spelling: validate's caps are options, whatever joins its case file's keys") {
  // Validate names its case file's keys "cases[0].collective.algorithm: ring" (separator ": "), but its
  // caps are its command line's: "--max-events N", not "--max-events: N".
  analysis::CollectiveOptionNames validate;
  validate.separator = ": ";
  CHECK(validate.takes(validate.max_events, "N") == "--max-events N");
  CHECK(validate.said(validate.algorithm, "ring") == "--algorithm: ring");
  const auto py = analysis::CollectiveOptionNames::for_language(OptionSpelling::python());
  CHECK(py.takes(py.max_sim_memory, "'SIZE'") == "max_sim_memory='SIZE'");
}
