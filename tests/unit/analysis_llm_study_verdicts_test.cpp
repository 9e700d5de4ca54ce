// Every verdict the LLM study prints held to its own rows (issue 31): each row's 3D/DP column is its
// cells' ratio; "DP-heavy stops paying" names exactly the GPU counts whose rows show 3D at least 5%
// ahead ("from N" only when every larger compared count does too); a break-even critical batch is
// where the two families' times to train meet, each at its fastest of the batches it was planned at,
// the family named faster above it is; each plan shown fits
// in the GPU's memory, and "no layout" / "none fits" are what the planner finds at that batch.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <sstream>
#include <vector>

#include "analysis/study/llm_study.h"
#include "analysis/study/study_report.h"

using namespace hybridsim;
using analysis::LlmPlanCandidate;
using analysis::LlmStudyCell;
using analysis::LlmStudyResult;

namespace {

// The line of `text` that starts with `prefix` (empty when none).
std::string line_of(const std::string& text, const std::string& prefix) {
  const std::size_t at = text.starts_with(prefix) ? 0 : text.find("\n" + prefix);
  if (at == std::string::npos) return {};
  const std::size_t begin = at == 0 ? 0 : at + 1;
  return text.substr(begin, text.find('\n', begin) - begin);
}

// The integers of "64, 4096 and 16384".
std::vector<int> counts(const std::string& text) {
  std::vector<int> out;
  for (std::size_t i = 0; i < text.size();) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    out.push_back(std::stoi(text.substr(i, end - i)));
    i = end;
  }
  return out;
}

// The table's row of a cell, found by its first four columns; its last column is 3D/DP.
void check_row(const LlmStudyResult& r, const LlmStudyCell& c, const std::string& text) {
  char head[128];
  std::snprintf(head, sizeof head, "%-10s %-9s %-9s %-9s %6d  ", c.model.c_str(), c.cluster.c_str(),
                c.ib.c_str(), c.ib_per_gpu.c_str(), c.gpus);
  const std::string row = line_of(text, head);
  CAPTURE(row);
  REQUIRE_FALSE(row.empty());
  const double advantage = analysis::llm_three_d_advantage(r, c);
  CHECK(row.substr(row.find_last_of(' ') + 1) ==
        (advantage > 0 ? analysis::format_fixed(advantage, 2) : "-"));
  for (const auto* plan : {&c.dp_heavy, &c.three_d})
    if (*plan)
      CHECK(row.find(analysis::format_count(std::llround((*plan)->tokens_per_second))) != std::string::npos);
}

// Per model, machine and bandwidth, the "stops paying" line against the rows' 3D/DP.
void check_stops_paying(const LlmStudyResult& r, const std::string& text) {
  const std::size_t n = r.config.gpus.size();
  for (std::size_t i = 0; i < r.cells.size(); i += n) {
    const LlmStudyCell& head = r.cells[i];
    std::vector<int> compared, paying;
    bool estimated = false;
    for (std::size_t j = i; j < i + n; ++j) {
      const LlmStudyCell& c = r.cells[j];
      if (!c.dp_heavy || !c.three_d) continue;
      compared.push_back(c.gpus);
      if (analysis::llm_three_d_advantage(r, c) < 1.05) continue;
      paying.push_back(c.gpus);
      estimated = estimated || !c.dp_heavy->simulated() || !c.three_d->simulated();
    }
    const std::string prefix = "DP-heavy stops paying, " + head.model + " on " + head.cluster + " at " +
                               head.ib + " a NIC port (" + head.ib_per_gpu + " a GPU): ";
    std::string verdict = line_of(text, prefix);
    CAPTURE(verdict);
    REQUIRE_FALSE(verdict.empty());
    verdict = verdict.substr(prefix.size());
    const std::string mark = " (estimated, not simulated)";
    CHECK(verdict.ends_with(mark) == estimated);
    if (verdict.ends_with(mark)) verdict.resize(verdict.size() - mark.size());
    if (compared.empty()) {
      CHECK(verdict == "no GPU count with both families");
    } else if (paying.empty()) {
      CHECK(verdict == "not within the grid");
    } else if (verdict.starts_with("from ")) {
      // From N: every compared count from N on pays, the one before N does not; those named after
      // "and at" are the paying counts below N.
      const std::vector<int> named = counts(verdict);
      const int from = named.front();
      const auto at = std::find(compared.begin(), compared.end(), from);
      REQUIRE(at != compared.end());
      for (auto k = at; k != compared.end(); ++k)
        CHECK(std::find(paying.begin(), paying.end(), *k) != paying.end());
      if (at != compared.begin())
        CHECK(std::find(paying.begin(), paying.end(), *(at - 1)) == paying.end());
      std::vector<int> expected{from};
      for (const int g : paying)
        if (g < from) expected.push_back(g);
      CHECK(named == expected);
    } else {
      // "at X GPUs, not at L": X the paying counts, L the largest compared, not paying.
      std::vector<int> expected = paying;
      expected.push_back(compared.back());
      CHECK(verdict.starts_with("at "));
      CHECK(counts(verdict) == expected);
      CHECK(std::find(paying.begin(), paying.end(), compared.back()) == paying.end());
    }
  }
}

// A family's time to train at critical batch `critical`, up to a common factor: E(B) ~ 1 + B/B_crit
// tokens (Kaplan et al.) at R tokens/s.
double relative_time(double batch_tokens, double tokens_per_second, double critical) {
  return (1 + batch_tokens / critical) / tokens_per_second;
}

// A family's plans at the batches it was planned at (its headline alone where the cell lists none).
std::vector<LlmPlanCandidate> options_of(const std::vector<LlmPlanCandidate>& options,
                                         const std::optional<LlmPlanCandidate>& headline) {
  return options.empty() && headline ? std::vector<LlmPlanCandidate>{*headline} : options;
}

// "4,000,000" read as 4e6.
double number(const std::string& text) {
  std::string digits;
  for (const char ch : text)
    if (ch != ',') digits += ch;
  return std::stod(digits);
}

// Who a break-even line names: "3D trains faster" (or "3D") +1, "DP-heavy trains faster" -1, "both
// train alike" 0.
int named(const std::string& words) {
  if (words.starts_with("3D")) return 1;
  if (words.starts_with("DP-heavy")) return -1;
  REQUIRE(words.starts_with("both train alike"));
  return 0;
}

// Each break-even line against the plans it compares: each family at its fastest, at each critical
// batch, of the batches it was planned at; the line shows where a cell's plans span more than one batch.
void check_break_even(const LlmStudyResult& r, const std::string& text) {
  for (const LlmStudyCell& c : r.cells) {
    if (c.ib != r.config.ib_bandwidths.front()) continue;
    const std::string prefix =
        "break-even, " + c.model + " on " + std::to_string(c.gpus) + " GPUs of " + c.cluster + " ";
    const std::string line = line_of(text, prefix);
    CAPTURE(line);
    const std::vector<LlmPlanCandidate> dp = options_of(c.dp_heavy_options, c.dp_heavy);
    const std::vector<LlmPlanCandidate> td = options_of(c.three_d_options, c.three_d);
    std::vector<std::int64_t> batches;
    for (const auto* family : {&dp, &td})
      for (const LlmPlanCandidate& p : *family) batches.push_back(p.layout.global_batch);
    const bool differ = c.dp_heavy && c.three_d && std::ranges::min(batches) != std::ranges::max(batches);
    REQUIRE(line.empty() != differ);
    if (!differ) continue;
    const auto fastest = [&](const std::vector<LlmPlanCandidate>& plans, double critical) {
      double best = INFINITY;
      for (const LlmPlanCandidate& p : plans)
        best = std::min(best, relative_time(static_cast<double>(p.layout.global_batch * c.sequence),
                                            p.tokens_per_second, critical));
      return best;
    };
    // DP-heavy's time over 3D's at a critical batch, and who trains faster there.
    const auto dp_over_3d = [&](double critical) { return fastest(dp, critical) / fastest(td, critical); };
    const auto winner = [&](double critical) {
      const double ratio = dp_over_3d(critical);
      return std::abs(ratio - 1) < 1e-9 ? 0 : ratio > 1 ? 1 : -1;
    };
    const std::string said = line.substr(line.find("): ") + 3);
    if (said.starts_with("critical batch ")) {  // "critical batch X tokens; A above it, B below"
      const double at = number(said.substr(15, said.find(" tokens") - 15));
      CHECK(at > 0);
      CHECK(dp_over_3d(at) == doctest::Approx(1).epsilon(1e-6));  // they meet there
      const std::string above = said.substr(said.find("; ") + 2);
      CHECK(winner(at * 2) == named(above));  // the family named above it is faster
      CHECK(winner(at / 2) == named(above.substr(above.find(" above it, ") + 11)));  // and below
    } else if (said.starts_with("critical batches ")) {
      // "critical batches X, Y tokens; A below X, B from X to Y, C above Y": each stretch's middle.
      std::vector<double> at;
      std::istringstream list(said.substr(17, said.find(" tokens") - 17));
      for (std::string item; std::getline(list, item, ' ');)
        if (!item.empty()) at.push_back(number(item.back() == ',' ? item.substr(0, item.size() - 1) : item));
      REQUIRE(at.size() >= 2);
      // Split at commas, the numbers' too: a stretch's words are the pieces that start with a letter.
      std::istringstream parts(said.substr(said.find("; ") + 2));
      std::vector<std::string> stretch;
      for (std::string part; std::getline(parts, part, ',');) {
        if (part.starts_with(" ")) part.erase(0, 1);
        if (!part.empty() && !std::isdigit(static_cast<unsigned char>(part[0]))) stretch.push_back(part);
      }
      REQUIRE(stretch.size() == at.size() + 1);
      for (std::size_t k = 0; k < at.size(); ++k) {
        CHECK(dp_over_3d(at[k]) == doctest::Approx(1).epsilon(1e-6));
        CHECK(winner(k == 0 ? at[0] / 2 : std::sqrt(at[k - 1] * at[k])) == named(stretch[k]));
      }
      CHECK(winner(at.back() * 2) == named(stretch.back()));
    } else {
      for (const double critical : {1e3, 1e6, 1e9, 1e12}) CHECK(winner(critical) == named(said));
    }
  }
}

// Every verdict of a study's printed table against its cells and rows.
void check_llm_study_verdicts(const LlmStudyResult& r) {
  std::ostringstream out;
  analysis::print_llm_table(r, out);
  const std::string text = out.str();
  for (const LlmStudyCell& c : r.cells) check_row(r, c, text);
  check_stops_paying(r, text);
  check_break_even(r, text);
}

}  // namespace

TEST_CASE("llm study: every verdict of the CI grid agrees with its rows, what it says fits does") {
  const analysis::LlmStudyConfig config = analysis::load_llm_study_config(
      std::filesystem::path(HYBRIDSIM_SOURCE_DIR) / "scenarios/study/ci-llm.yaml");
  const LlmStudyResult r = analysis::run_llm_study(config, {.threads = 2});
  REQUIRE(r.cells.size() == 12);
  check_llm_study_verdicts(r);
  for (const LlmStudyCell& c : r.cells) {
    CAPTURE(c.model);
    CAPTURE(c.gpus);
    const analysis::LlmPlanRequest q = analysis::make_llm_plan_request(
        {.model = c.model, .gpus = c.gpus, .cluster = c.cluster, .ib_bandwidth = c.ib});
    for (const auto* plan : {&c.dp_heavy, &c.three_d}) {
      REQUIRE(*plan);
      CHECK((*plan)->memory.total() <= q.memory.bytes);
    }
    // DP-heavy's plan is its family's: pp 1, ZeRO-3, tp up to a machine.
    CHECK(c.dp_heavy->layout.pp == 1);
    CHECK(c.dp_heavy->layout.zero == 3);
    CHECK(c.dp_heavy->layout.tp <= 8);
  }
}

TEST_CASE("llm study: a grid where a family has no plan says why, as the planner finds it") {
  // GPT-3 175B on DGX A100: at 8 GPUs layouts exist but none fits (175 B parameters at 16 bytes over
  // 8 GPUs is 350 GB a GPU); at 40 the 3D family has no layout (tp x pp up to 64 is a power of two
  // dividing 40, so dp holds the factor 5, which divides no batch of 1,536 sequences).
  analysis::LlmStudyConfig config;
  config.models = {"gpt3-175b"};
  config.clusters = {"dgx-a100"};
  config.gpus = {8, 40};
  config.ib_bandwidths = {"25 GB/s"};
  config.simulate = 1;
  const LlmStudyResult r = analysis::run_llm_study(config, {.threads = 2});
  REQUIRE(r.cells.size() == 2);
  std::ostringstream out;
  analysis::print_llm_table(r, out);
  for (const LlmStudyCell& c : r.cells) {
    CAPTURE(c.gpus);
    const analysis::LlmPlanRequest q = analysis::make_llm_plan_request(
        {.model = c.model, .gpus = c.gpus, .cluster = c.cluster, .ib_bandwidth = c.ib});
    std::size_t enumerated = 0;
    const bool fits = !analysis::llm_fitting_candidates(q, &enumerated).empty();
    // At the published batch the plan is there when a layout fits; without a plan, the kind of
    // refusal is what the planner finds there. (3D may train at DP-heavy's larger batch instead.)
    if (c.three_d && c.three_d->layout.global_batch == c.published_batch) CHECK(fits);
    if (!c.three_d)
      CHECK(c.three_d_refusal == (enumerated == 0 ? analysis::LlmPlanRefusal::NoLayout
                                                  : analysis::LlmPlanRefusal::NothingFits));
    if (!c.dp_heavy) CHECK(c.dp_heavy_refusal.has_value());
  }
  CHECK(r.cells[0].three_d_refusal == analysis::LlmPlanRefusal::NothingFits);
  CHECK(out.str().find("none fits") != std::string::npos);
  check_llm_study_verdicts(r);
}

TEST_CASE("llm study: the break-even and 'stops paying' of hand-made rows agree with them") {
  // DP-heavy at 4 M tokens a batch and 2 M tokens/s, 3D at 2 M and 1.5 M tokens/s: they meet at a
  // critical batch of 4 M tokens (analysis_llm_study_test derives it); 3D 2x ahead at 4,096 GPUs.
  auto plan = [](std::int64_t sequences, double tokens_per_second) {
    LlmPlanCandidate c;
    c.layout = {.dp = 8, .tp = 8, .zero = 3, .global_batch = sequences};
    c.tokens_per_second = tokens_per_second;
    c.estimated_only = "over the budget";
    return c;
  };
  LlmStudyResult r;
  r.config.ib_bandwidths = {"50 GB/s"};
  r.config.critical_batch_tokens = {8e6};
  r.config.gpus = {1024, 4096};
  for (const int gpus : {1024, 4096}) {
    LlmStudyCell c{
        .model = "toy", .cluster = "dgx-h100", .ib = "50 GB/s", .gpus = gpus, .ib_per_gpu = "48 GB/s"};
    c.published_batch = 2000;
    c.sequence = 1000;
    c.dp_heavy = plan(gpus == 1024 ? 4000 : 2000, 2e6);
    c.three_d = plan(2000, gpus == 1024 ? 1.5e6 : 4e6);
    c.dp_heavy_ttt = {gpus == 1024 ? 1.0 : 2.0};
    c.three_d_ttt = {1.0};
    r.cells.push_back(c);
  }
  check_llm_study_verdicts(r);
}
