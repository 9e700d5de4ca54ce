// Transformer architectures as numbers: the shapes of a decoder (or encoder) stack, the named
// models of ../shared/reference/transformers.md (model cards; Megatron-LM papers), the checks a
// tensor-parallel split needs, parameter counts and the FLOP counts that results report.
//   TransformerModel m = named_transformer("llama3-8b");   // 32 layers, hidden 4096, GQA 32 (8)
//   check_transformer(m, /*tp=*/8);                        // InputError when heads % tp != 0, ...
//   std::int64_t p = transformer_parameters(m);            // 8.03e9
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hybridsim::workloads {

enum class FfnKind : std::uint8_t { Gelu, Swiglu };  // 2 MLP matrices, or 3 (gate, up, down)
std::string_view ffn_kind_name(FfnKind kind);           // "gelu", "swiglu"
FfnKind ffn_kind_by_name(std::string_view name);        // InputError "expected gelu or swiglu"

struct TransformerModel {
  std::string name = "transformer";
  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;    // grouped-query attention: K and V have kv_heads heads (= heads: MHA)
  std::int64_t ffn_hidden = 0;
  FfnKind ffn = FfnKind::Gelu;
  std::int64_t vocab = 0;
  std::int64_t sequence = 0;    // tokens per sample
  // A mixture of experts (experts > 1): every layer's MLP is `experts` MLPs of ffn_hidden each, a
  // router picks top_k of them per token, and each expert takes at most capacity_factor × its even
  // share of the routed tokens (tokens × top_k × capacity_factor / experts).
  std::int64_t experts = 1;
  std::int64_t top_k = 1;
  double capacity_factor = 1.0;
  bool is_moe() const { return experts > 1; }
  bool operator==(const TransformerModel&) const = default;
};

// "bert-large", "gpt3-175b", "megatron-1.2b", "llama2-7b", "llama2-70b", "llama3-8b", "llama3-70b",
// "llama3-405b", "mixtral-8x7b" (8 experts, top 2, capacity factor 1).
std::vector<std::string> transformer_model_names();
bool is_transformer_model_name(std::string_view name);
// A workload's network (a scenario's `workload.network`, a generated profile's meta.network) that is a
// transformer: "transformer" (a custom model) or a named one.
bool is_transformer_network(std::string_view network);
// InputError listing the names for anything else.
TransformerModel named_transformer(std::string_view name);

// What a tensor-parallel split of size `tp` needs, as InputError naming the offending numbers:
// every size positive, hidden divisible by heads, kv_heads dividing heads, heads and kv_heads
// divisible by tp (Megatron splits by heads; a KV head is not split), ffn_hidden divisible by tp.
// The vocabulary need not be: it is padded (padded_vocab).
void check_transformer(const TransformerModel& model, int tp);
// The largest count a step's kernels derive from the sizes: a layer's forward FLOPs for one
// micro-batch (its attention 4·b·s²·h among them) and the LM head's, each at most
// sim::limits::kLayerFlop, so that the backward's multiples and the memory's s² terms stay within
// int64. InputError naming the sequence otherwise ("llama3-8b: sequence 100000000 at micro_batch 1 ...").
void check_transformer_counts(const TransformerModel& model, std::int64_t micro_batch);
// What sequence parallelism over `tp` GPUs needs, as InputError: tp dividing the sequence.
void check_sequence_parallel(const TransformerModel& model, int tp);
// Whether sequence parallelism can split `model`'s sequence over `tp` (check_sequence_parallel's rule).
bool sequence_parallel_divides(const TransformerModel& model, int tp);
// What a mixture of experts over an expert-parallel group of `ep` needs, as InputError: experts
// divisible by ep, 1 <= top_k <= experts, capacity_factor > 0 (and ep = 1 for a dense model).
void check_experts(const TransformerModel& model, int ep);
// The data-parallel replicas that hold the same experts, dp / ep (at least 1): the group an expert
// op's gradients are reduced over and its ZeRO state sharded over (workloads/program/expert_parallel.h
// splits dp into ep blocks of them); 1 at dp = ep, where each replica holds its experts whole.
int expert_replicas(int dp, int ep);
// Tokens one expert processes out of `tokens` routed ones: ceil(tokens × top_k × capacity / experts).
std::int64_t expert_tokens(const TransformerModel& model, std::int64_t tokens);
// The parameters of one layer's experts (experts × the MLP; zero for a dense model) and the router's
// (h × experts): expert parameters are divided by ep, the router's are not.
std::int64_t layer_expert_parameters(const TransformerModel& model);

// One norm's parameters: RMSNorm's weight (h) with SwiGLU models, LayerNorm's weight and bias (2h)
// with GELU ones.
std::int64_t norm_parameters(const TransformerModel& model);
// One layer's parameters on one tensor-parallel rank apart from its experts: attention and a dense
// MLP divided by tp; the two norms and a mixture's router (h × experts) whole, as Megatron-LM keeps
// them on every TP rank (its LayerNorm / RMSNorm and TopKRouter weights are not split;
// ../shared/reference/transformers.md, "How Megatron-LM parallelises a layer", splits only the
// GEMMs and the vocabulary). The one rule for the profile's op (profile_gen_transformer.cpp), the
// memory model's weights and plan's closed form.
std::int64_t layer_shared_parameters_per_rank(const TransformerModel& model, int tp);
// The part of that whole on every TP rank: the two norms and a mixture's router (h × experts).
// Under sequence parallelism each rank's gradient of them sees s/t of the tokens, so Megatron-LM
// all-reduces them over the TP group once a step (workloads/profile/tp_sync.h, TpGradient); the
// head's share is the final norm, norm_parameters.
std::int64_t layer_replicated_parameters(const TransformerModel& model);
// The input embedding on one TP rank: padded_vocab × h / tp (vocabulary-parallel).
std::int64_t embedding_parameters_per_rank(const TransformerModel& model, int tp);
// The LM head's op on one TP rank: the final norm, whole on every TP rank, and the output layer,
// padded_vocab × h / tp. It lives where the head does: the last pipeline stage.
std::int64_t head_parameters_per_rank(const TransformerModel& model, int tp);

// The vocabulary as Megatron-LM pads it for a tp split: up to a multiple of 128 · tp (GPT-3's
// 50,257 becomes 51,200 at tp 8); the embedding, LM head and loss run on the padded size.
std::int64_t padded_vocab(const TransformerModel& model, int tp);

// Per-layer parameters: Q and O (h² each), K and V (h × kv_heads·h/heads each), the MLP (2 or 3
// matrices of h × ffn_hidden), two norms (LayerNorm 2h each with GELU models, RMSNorm h with SwiGLU ones) and
// the biases of the linear layers are left out (Llama has none; GPT's are < 0.1%). A mixture of
// experts has `experts` MLPs and a router (h × experts).
std::int64_t layer_parameters(const TransformerModel& model);
// All parameters: layers + input embedding (vocab × h) + output layer (vocab × h, untied) + final norm.
std::int64_t transformer_parameters(const TransformerModel& model);

// Forward FLOPs of one layer for `batch` samples: 2 per multiply-add of every GEMM, attention's
// scores and weighted sum 2·2·b·s²·h (no causal halving, as Narayanan et al. count). A mixture of
// experts counts the router and top_k experts' MLPs per token (the active parameters; the capacity
// factor's padding is not model FLOPs), times min(1, capacity_factor): the tokens an expert drops
// are not computed, so not counted (Megatron-LM counts them; MFU would rise as capacity falls).
std::int64_t layer_forward_flop(const TransformerModel& model, std::int64_t batch);
// The share of each MoE layer's routed tokens that its experts drop, with every expert getting its
// even share (load imbalance is not modelled): 1 - capacity_factor below 1, else 0 (and 0 dense).
double dropped_token_share(const TransformerModel& model);
// Forward FLOPs of the output layer (logits): 2·b·s·h·V.
std::int64_t logits_forward_flop(const TransformerModel& model, std::int64_t batch);
// Model FLOPs of one training iteration of `batch` samples as Narayanan et al. (arXiv 2104.04473)
// count them: backward twice forward, the layers' forward counted again under full recomputation,
// the logits 3 times. For a GPT shape (ffn 4h, MHA, GELU) this is their
// 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)) with recomputation. A double: a layer's and the head's
// counts are bounded (check_transformer_counts, 2^60 each), their sum over every layer is not (a
// sequence of 8e6 on Llama 3 8B, 1.0e20, wrapped to 8.8e18 in int64 and printed MFU 3.7% for 42%).
double model_flop_per_iteration(const TransformerModel& model, std::int64_t batch, bool full_recompute);

}  // namespace hybridsim::workloads
