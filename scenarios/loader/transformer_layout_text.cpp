#include "scenarios/loader/transformer_layout_text.h"

#include <initializer_list>

namespace hybridsim::scenarios {
namespace {

// "4q", "q" (a coefficient of 1), "" (0): one term of a GPU number.
std::string term(long long coefficient, const char* name) {
  if (coefficient == 0) return "";
  return (coefficient == 1 ? std::string() : std::to_string(coefficient)) + name;
}

// The sum of the non-empty terms and the constant: "4s + 2q + 1", "0".
std::string sum(std::initializer_list<std::string> terms, long long constant = 0) {
  std::string out;
  for (const std::string& t : terms)
    if (!t.empty()) out += (out.empty() ? "" : " + ") + t;
  if (constant != 0 || out.empty()) out += (out.empty() ? "" : " + ") + std::to_string(constant);
  return out;
}

}  // namespace

TransformerLayoutText transformer_layout_text(int dp, int tp, int pp) {
  const long long stage_gpus = static_cast<long long>(dp) * tp;
  const std::string tp_group = "a TP group of " + std::to_string(tp) + " GPUs";
  TransformerLayoutText out;
  out.placement = pp > 1 ? "pipeline: " + std::to_string(pp) + " stages of whole layers" +
                               (tp > 1 ? ", each stage's layers split over " + tp_group : "")
                  : tp > 1 ? "every layer split over " + tp_group +
                                 " (its weight matrices by columns and rows, Megatron's)"
                           : "every layer on every GPU";
  const std::string s = pp > 1 ? term(stage_gpus, "s") : "", q = dp > 1 ? term(tp, "q") : "";
  const std::string who = pp > 1 ? (dp > 1 ? "replica q's stage s" : "stage s") : (dp > 1 ? "replica q" : "");
  if (tp == 1)
    out.mapping = who.empty() ? "the one replica on GPU 0" : who + " on GPU " + sum({s, q});
  else
    out.mapping = (who.empty() ? std::string("the TP group") : who + ": its TP group") + " on GPUs " +
                  sum({s, q}) + " to " + sum({s, q}, tp - 1) + " (TP rank r on GPU " + sum({s, q, "r"}) + ")";
  if (pp > 1 && dp > 1)
    out.mapping += "; stage s of every replica on GPUs " + sum({s}) + " to " + sum({s}, stage_gpus - 1);
  return out;
}

}  // namespace hybridsim::scenarios
