#include "analysis/plan/llm_dimensions.h"

#include <algorithm>
#include <charconv>

namespace hybridsim::analysis {
namespace {

int to_int(std::string_view text) {
  int v = 0;
  std::from_chars(text.data(), text.data() + text.size(), v);
  return v;
}

std::vector<std::string> texts(const std::vector<int>& values) {
  std::vector<std::string> out;
  for (const int v : values) out.push_back(std::to_string(v));
  return out;
}

// Powers of two up to `limit` that divide `n`.
std::vector<int> powers_dividing(int n, int limit) {
  std::vector<int> out;
  for (int v = 1; v <= limit; v *= 2)
    if (n % v == 0) out.push_back(v);
  return out;
}

std::vector<std::string> tp_values(const LlmSpace& s) {
  return texts(powers_dividing(s.gpus, std::min(s.gpus, s.gpus_per_machine)));
}

// Divisors of the GPU count up to the layers: stages of whole layers, split as the run splits them
// where they do not divide (llm_stage_layers; Llama 3 405B's 126 layers over pp 16, as Meta trained
// it, were not searched while pp had to divide the layers). Interleaved layouts still need pp · v to
// divide the layers (llm_layout_problem).
std::vector<std::string> pp_values(const LlmSpace& s) {
  std::vector<int> out;
  const auto layers = static_cast<int>(s.setting.model.layers);
  for (int p = 1; p <= std::min(layers, s.gpus); ++p)
    if (s.gpus % p == 0) out.push_back(p);
  return texts(out);
}

std::vector<std::string> ep_values(const LlmSpace& s) {
  const auto experts = static_cast<int>(s.setting.model.experts);
  return texts(s.setting.model.is_moe() ? powers_dividing(experts, experts) : std::vector<int>{1});
}

std::vector<std::string> fixed(std::vector<std::string> v) { return v; }

// The table, every row enabled (a row can be disabled to keep its default, as the study's families do).
std::vector<PlanDimension> table() {
  using L = LlmLayout;
  return {
      {"dp", "parallelism.dp", true, "ZeRO shards over it (see zero)",
       "DP exchange 2(dp-1)/dp x gradient bytes over InfiniBand once dp x tp leaves a machine", nullptr,
       [](L& l, std::string_view v) { l.dp = to_int(v); }, [](const L& l) { return std::to_string(l.dp); }},
      {"tp", "parallelism.tp", true,
       "weights, gradients, optimizer /tp; activations 24/t of 34 s.b.h per layer",
       "GEMMs /tp (smaller ones, less efficient: F1/2); 4 all-reduces of b.s.h per layer on NVLink",
       tp_values, [](L& l, std::string_view v) { l.tp = to_int(v); },
       [](const L& l) { return std::to_string(l.tp); }},
      {"pp", "parallelism.pp", true,
       "parameters /pp; the first stage holds min(p, m) micro-batches of L/p layers",
       "bubble (p-1)/(v.m) of compute; activations b.s.h between stages", pp_values,
       [](L& l, std::string_view v) { l.pp = to_int(v); }, [](const L& l) { return std::to_string(l.pp); }},
      {"sequence_parallel", "parallelism.sequence_parallel", true,
       "activations 34/t s.b.h per layer (norms too)",
       "all-reduce becomes reduce-scatter + all-gather (same bytes)",
       [](const LlmSpace&) {
         return fixed({"false", "true"});
       },
       [](L& l, std::string_view v) { l.sequence_parallel = v == "true"; },
       [](const L& l) { return std::string(l.sequence_parallel ? "true" : "false"); }},
      {"micro_batch", "training.micro_batch", true, "activations x b",
       "m = B/(dp.b) micro-batches: bigger GEMMs, smaller bubble share",
       [](const LlmSpace&) {
         return fixed({"1", "2", "4", "8"});
       },
       [](L& l, std::string_view v) { l.micro_batch = to_int(v); },
       [](const L& l) { return std::to_string(l.micro_batch); }},
      {"recompute", "training.recompute", true, "selective: no softmax; full: 2 s.b.h per layer + one layer",
       "selective: unfused attention forward again (nothing under flash); full: the whole forward "
       "again, 2 more TP collectives",
       // Under flash attention selective recomputation recomputes nothing (the generated step is
       // recompute none's): not searched there, so that twins take no finalist's place.
       [](const LlmSpace& space) {
         return space.setting.flash_attention ? fixed({"none", "full"})
                                              : fixed({"none", "selective", "full"});
       },
       [](L& l, std::string_view v) { l.recompute = workloads::recompute_by_name(v); },
       [](const L& l) { return std::string(workloads::recompute_name(l.recompute)); }},
      {"zero", "parallelism.zero", true, "1: optimizer /dp; 2: gradients too; 3: weights too",
       "1, 2: reduce-scatter + all-gather (same bytes); 3: weights gathered in every forward and backward",
       [](const LlmSpace&) {
         return fixed({"0", "1", "2", "3"});
       },
       [](L& l, std::string_view v) { l.zero = to_int(v); },
       [](const L& l) { return std::to_string(l.zero); }},
      {"schedule", "pipeline.schedule", true, "gpipe: all m micro-batches in flight; 1f1b: at most p",
       "bubble (p-1)/m for both; interleaved (p-1)/(v.m)",
       [](const LlmSpace&) {
         return fixed({"1f1b", "gpipe", "interleaved"});
       },
       [](L& l, std::string_view v) { l.schedule = workloads::pipeline_schedule_by_name(v); },
       [](const L& l) { return std::string(workloads::pipeline_schedule_name(l.schedule)); }},
      {"virtual_stages", "pipeline.virtual_stages", true,
       "first stage holds L(1 + (p-1)/(p.v)) layers' worth", "bubble /v, v x the transfers between stages",
       [](const LlmSpace&) {
         return fixed({"1", "2", "4"});
       },
       [](L& l, std::string_view v) { l.virtual_stages = to_int(v); },
       [](const L& l) { return std::to_string(l.virtual_stages); }},
      {"ep", "parallelism.ep", true, "expert MLP parameters x experts / ep",
       "4 all-to-alls of b.s.h.top_k per MoE layer", ep_values,
       [](L& l, std::string_view v) { l.ep = to_int(v); }, [](const L& l) { return std::to_string(l.ep); }},
  };
}

}  // namespace

std::vector<PlanDimension> llm_plan_dimensions() { return table(); }

std::vector<PlanDimension> llm_plan_dimensions_all_enabled() {
  std::vector<PlanDimension> t = table();
  for (auto& d : t) d.enabled = true;
  return t;
}

std::vector<LlmLayout> enumerate_layouts(const std::vector<PlanDimension>& dims, const LlmSpace& space) {
  std::vector<LlmLayout> partial{LlmLayout{.global_batch = space.global_batch}};
  for (const PlanDimension& d : dims) {
    if (!d.enabled || !d.values) continue;
    std::vector<LlmLayout> next;
    for (const LlmLayout& l : partial)
      for (const std::string& v : d.values(space)) {
        LlmLayout c = l;
        d.set(c, v);
        next.push_back(c);
      }
    partial = std::move(next);
  }
  std::vector<LlmLayout> out;
  for (LlmLayout& l : partial) {
    if (space.gpus % (l.tp * l.pp) != 0) continue;
    l.dp = space.gpus / (l.tp * l.pp);
    if (llm_layout_problem(space.setting, l, space.gpus_per_machine).empty()) out.push_back(l);
  }
  return out;
}

std::vector<std::int64_t> batches_above(const std::vector<PlanDimension>& dims, const LlmSpace& space) {
  std::vector<int> tps{1}, pps{1};
  for (const PlanDimension& d : dims) {
    std::vector<int>* into = d.name == "tp" ? &tps : d.name == "pp" ? &pps : nullptr;
    if (into == nullptr || !d.enabled || !d.values) continue;
    into->clear();
    for (const std::string& v : d.values(space)) into->push_back(to_int(v));
  }
  std::vector<std::int64_t> replicas;
  for (const int tp : tps)
    for (const int pp : pps)
      if (space.gpus % (tp * pp) == 0) replicas.push_back(space.gpus / (tp * pp));
  std::sort(replicas.begin(), replicas.end());
  replicas.erase(std::unique(replicas.begin(), replicas.end()), replicas.end());
  std::vector<std::int64_t> out;
  if (replicas.empty()) return out;
  const std::int64_t last = (space.global_batch / replicas.back() + 1) * replicas.back();
  LlmSpace at = space;
  for (const std::int64_t dp : replicas)
    for (at.global_batch = (space.global_batch / dp + 1) * dp; at.global_batch <= last; at.global_batch += dp)
      if (!enumerate_layouts(dims, at).empty()) {
        out.push_back(at.global_batch);
        break;
      }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::string> layout_overlay(const std::vector<PlanDimension>& dims, const LlmLayout& layout) {
  std::vector<std::string> out;
  for (const PlanDimension& d : dims) {
    // Without a pipeline the pipeline.* keys must be left out (the loader refuses them).
    if (!d.enabled || (layout.pp == 1 && std::string_view(d.key).starts_with("pipeline."))) continue;
    out.push_back(std::string(d.key) + "=" + d.get(layout));
  }
  return out;
}

namespace {

// The compact label's rows in its order: the text before the row's value (none for sp: its name
// says it), and when the row shows.
struct CompactRow {
  std::string_view name, prefix;
  bool with_value = true;
  bool (*shown)(const LlmLayout& layout) = nullptr;
};
constexpr CompactRow kCompactRows[] = {
    {"dp", "dp ", true, [](const LlmLayout&) { return true; }},
    {"tp", "tp ", true, [](const LlmLayout&) { return true; }},
    {"pp", "pp ", true, [](const LlmLayout& l) { return l.pp > 1; }},
    {"schedule", "", true, [](const LlmLayout& l) { return l.pp > 1; }},
    {"virtual_stages", "v", true, [](const LlmLayout& l) { return l.pp > 1 && l.virtual_stages > 1; }},
    {"ep", "ep ", true, [](const LlmLayout& l) { return l.ep > 1; }},
    {"sequence_parallel", "sp", false, [](const LlmLayout& l) { return l.sequence_parallel; }},
    {"micro_batch", "mb ", true, [](const LlmLayout&) { return true; }},
    {"recompute", "", true, [](const LlmLayout& l) { return l.recompute != workloads::Recompute::None; }},
    {"zero", "Z", true, [](const LlmLayout&) { return true; }},
};

std::string compact_label(const std::vector<PlanDimension>& dims, const LlmLayout& layout) {
  std::string s;
  for (const CompactRow& row : kCompactRows) {
    if (!row.shown(layout)) continue;
    const auto d =
        std::find_if(dims.begin(), dims.end(), [&](const PlanDimension& x) { return x.name == row.name; });
    s += " " + std::string(row.prefix) + (row.with_value && d != dims.end() ? d->get(layout) : "");
  }
  return s.empty() ? s : s.substr(1);
}

}  // namespace

std::string layout_label(const std::vector<PlanDimension>& dims, const LlmLayout& layout, LabelForm form) {
  if (form == LabelForm::Compact) return compact_label(dims, layout);
  std::string s;
  for (const PlanDimension& d : dims) {
    if (!d.enabled) continue;
    const std::string v = d.get(layout);
    if (d.name == "sequence_parallel") {
      if (v == "true") s += " sp";
      continue;
    }
    s += " " + std::string(d.name == "micro_batch" ? "mb" : d.name) + " " + v;
  }
  return s.empty() ? s : s.substr(1);
}

std::string layout_differences(const std::vector<PlanDimension>& dims, const LlmLayout& a,
                               const LlmLayout& b) {
  std::string s;
  for (const PlanDimension& d : dims) {
    const std::string va = d.get(a), vb = d.get(b);
    if (va != vb) s += (s.empty() ? "" : ", ") + std::string(d.name) + " " + va + "->" + vb;
  }
  return s.empty() ? "nothing" : s;
}

}  // namespace hybridsim::analysis
