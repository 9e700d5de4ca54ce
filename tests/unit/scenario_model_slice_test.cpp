// A layer-slice's whole model (scenarios/loader/model_slice.h): what one GPU of the whole model
// needs, computed here by hand from the model's shape, and the run's "model slice" line and
// summary.json members that say the slice's figures are the slice's and whether the model fits.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "analysis/run/run_outputs.h"
#include "analysis/run/scenario_run.h"
#include "scenarios/loader/resolve.h"

using namespace hybridsim;
using workloads::MemoryPart;

namespace {

scenarios::ResolvedScenario resolved(const std::string& yaml) {
  return scenarios::resolve(scenarios::parse_scenario(yaml, "s.yaml"));
}

// GPT-3 175B (Brown et al. 2020): 96 layers, hidden 12,288, 96 heads, GELU MLP of 4h, a 50,257-token
// vocabulary, 2,048-token sequences. BF16 on A100s, unfused attention, full recomputation, micro-batch
// 1, tp 8: the shipped slice scenarios' settings.
constexpr std::int64_t kH = 12288, kHeads = 96, kSeq = 2048, kTp = 8;
// A layer's parameters on one TP rank: QKV 3h² and the output projection h², the MLP's two h × 4h
// matrices 8h², over tp; two layer norms' scale and bias 4h whole, as Megatron-LM keeps them on every
// TP rank (no biases on the matrices).
constexpr std::int64_t kLayerPerRank = 12 * kH * kH / kTp + 4 * kH;
// Megatron pads the vocabulary to a multiple of 128 · tp = 1,024: 50,257 → 51,200 rows.
constexpr std::int64_t kPaddedVocab = 51200;
constexpr std::int64_t kVocabPerRank = kPaddedVocab * kH / kTp;  // the embedding's, and the LM head's
constexpr std::int64_t kFinalNorm = 2 * kH;                      // with the LM head, whole
// Korthikanti et al. 2022 (Table 2), bytes of 16-bit values, micro-batch 1: under full recomputation
// a layer keeps only its input, 2·s·h; while one layer's backward recomputes it, that layer's whole
// activations live: 10·s·h replicated + 24·s·h / t split, and the softmax 5·a·s² / t (unfused).
constexpr std::int64_t kLayerInput = 2 * kSeq * kH;
constexpr std::int64_t kOneLayerWhole =
    10 * kSeq * kH + 24 * kSeq * kH / kTp + 5 * kHeads * kSeq * kSeq / kTp;
constexpr std::int64_t kLogits = 4 * kSeq * kPaddedVocab / kTp;  // the loss's FP32 logits

// Weights 2 B, gradients 2 B, and 12 B of FP32 optimizer state (Adam's two moments and the master
// weights) per parameter under BF16 mixed precision.
void check_states(const workloads::MemoryBreakdown& m, std::int64_t parameters) {
  CHECK(m[MemoryPart::Weights].count() == 2 * parameters);
  CHECK(m[MemoryPart::Gradients].count() == 2 * parameters);
  CHECK(m[MemoryPart::OptimizerState].count() == 12 * parameters);
}

constexpr const char* kGpt3Slice =
    "cluster: {preset: dgx-a100, nodes: 2}\n"
    "workload: {network: gpt3-175b, model: {attention: unfused, layers_simulated: 2}}\n"
    "parallelism: {dp: 2, tp: 8}\n"
    "training: {micro_batch: 1, recompute: full}\n";

}  // namespace

TEST_CASE("model slice: a GPT-3 175B slice at tp 8 x dp 2 gives the whole model's memory, by hand") {
  const scenarios::ResolvedScenario r = resolved(kGpt3Slice);
  REQUIRE(r.transformer);
  REQUIRE(r.transformer->slice);
  const scenarios::ModelSlice& s = *r.transformer->slice;
  CHECK(s.model == "gpt3-175b");
  CHECK(s.layers_simulated == 2);
  CHECK(s.layers == 96);
  CHECK(s.pp == 1);
  // Every layer and both ends on each GPU: 96 × 226,541,568 + 2 × 78,643,200 + 24,576 =
  // 21,905,301,504 parameters, 175e9 / 8 with the norms whole and the padded vocabulary (the norms
  // over tp and no final norm: 21,901,148,160).
  const std::int64_t parameters = 96 * kLayerPerRank + 2 * kVocabPerRank + kFinalNorm;
  CHECK(parameters == 21'905'301'504);
  check_states(s.whole_model, parameters);
  const std::int64_t activations = 96 * kLayerInput + kOneLayerWhole + kLogits;
  CHECK(s.whole_model[MemoryPart::Activations].count() == activations);
  // 16 B × 21.9e9 + 5.46 GB = 355,947,905,024 B, 331.5 GiB: four times the A100's 80 GiB.
  CHECK(s.whole_model.total().count() == 16 * parameters + activations);
  CHECK(s.whole_model.total().count() == 355'947'905'024);
  // The slice itself is what the run checks and prints: 2 layers, 9.78 GiB.
  CHECK(r.transformer->memory.peaks().front().total().count() < 11 * (std::int64_t{1} << 30));
}

TEST_CASE("model slice: a pipeline's whole model is its largest stage with the layers split evenly") {
  // The shipped 16-layer slice of GPT-3 175B at tp 8 × pp 8, 1F1B, 64 micro-batches: the whole model
  // puts 96 / 8 = 12 layers on each stage. Stage 0 holds them and the embedding, and 1F1B keeps p − 0
  // = 8 micro-batches' layer inputs on it at its peak; the last stage holds the LM head, one
  // micro-batch and the logits, so stage 0 is the largest.
  const scenarios::ResolvedScenario r = resolved(
      "cluster: {preset: dgx-a100, nodes: 8}\n"
      "workload: {network: gpt3-175b, model: {attention: unfused, layers_simulated: 16}}\n"
      "parallelism: {dp: 1, tp: 8, pp: 8}\npipeline: {schedule: 1f1b}\n"
      "training: {micro_batch: 1, global_batch: 64, recompute: full}\n");
  REQUIRE(r.transformer);
  REQUIRE(r.transformer->slice);
  const scenarios::ModelSlice& s = *r.transformer->slice;
  CHECK(s.layers_simulated == 16);
  CHECK(s.layers == 96);
  CHECK(s.pp == 8);
  CHECK(s.stage == 0);
  const std::int64_t parameters = 12 * kLayerPerRank + kVocabPerRank;  // 2,797,142,016
  check_states(s.whole_model, parameters);
  const std::int64_t activations = 8 * 12 * kLayerInput + kOneLayerWhole;
  CHECK(s.whole_model[MemoryPart::Activations].count() == activations);
  CHECK(s.whole_model.total().count() == 50'164'924'416);  // 46.7 GiB: fits 80 GiB
}

TEST_CASE("model slice: the whole model's memory is what a run of every layer is checked with") {
  // The same scenario without layers_simulated resolves the whole model (a capacity large enough that
  // the check lets GPT-3 through): its memory, the one its run prints, is the slice's whole model.
  const std::string big = "  gpu_memory: 1000 GiB\n";
  const std::string settings[] = {
      // tp 8 × dp 2 with ZeRO-1: the optimizer state over the 2 replicas.
      "cluster:\n  preset: dgx-a100\n  nodes: 2\n" + big +
          "workload: {network: gpt3-175b, model: {attention: unfused LAYERS}}\n"
          "parallelism: {dp: 2, tp: 8, zero: 1}\ntraining: {micro_batch: 1, recompute: selective}\n",
      // Interleaved 1F1B, 2 model chunks per stage, at tp 8 × pp 4.
      "cluster:\n  preset: dgx-a100\n  nodes: 4\n" + big +
          "workload: {network: gpt3-175b, model: {attention: unfused LAYERS}}\n"
          "parallelism: {dp: 1, tp: 8, pp: 4}\npipeline: {schedule: interleaved, virtual_stages: 2}\n"
          "training: {micro_batch: 1, global_batch: 16, recompute: full}\n"};
  for (const std::string& yaml : settings) {
    CAPTURE(yaml);
    std::string slice = yaml, whole = yaml;
    slice.replace(slice.find(" LAYERS"), 7, ", layers_simulated: 8");
    whole.replace(whole.find(" LAYERS"), 7, "");
    const scenarios::ResolvedScenario s = resolved(slice), w = resolved(whole);
    REQUIRE(s.transformer->slice);
    CHECK_FALSE(w.transformer->slice);  // every layer simulated: nothing to say
    const auto whole_peak = workloads::largest_peak(w.transformer->memory.peaks());
    CHECK(s.transformer->slice->whole_model.total() == whole_peak);
    CHECK(s.transformer->slice->whole_model == w.transformer->memory.peaks().front());
  }
  // layers_simulated equal to the model's layers is every layer.
  CHECK_FALSE(
      resolved("cluster: {preset: dgx-h100}\n"
               "workload: {network: llama3-8b, model: {layers_simulated: 32}}\nparallelism: {tp: 8}\n")
          .transformer->slice);
}

TEST_CASE("run summary: a layer-slice says its figures are the slice's and whether the whole model fits") {
  // A 2-layer slice of Llama 3 8B at tp 8 on one DGX H100: the slice holds a few GiB a GPU (the
  // embedding and head's 2 × 128,256 × 4,096 / 8 parameters are most of it), the whole model 8.0e9 / 8
  // parameters × 16 B = 15 GiB of states alone and its 32 layers' activations: it fits 80 GiB, not 16.
  const std::string base = "cluster: {preset: dgx-h100GPU_MEMORY}\n"
                           "workload: {network: llama3-8b, model: {layers_simulated: 2}}\n"
                           "parallelism: {tp: 8}\n";
  const auto summary = [&](const std::string& memory) {
    std::string yaml = base;
    yaml.replace(yaml.find("GPU_MEMORY"), 10, memory);
    const scenarios::ResolvedScenario r = resolved(yaml);
    REQUIRE(r.transformer->slice);
    return std::pair{analysis::run_summary(analysis::run_scenario(r, {}), r.scenario),
                     r.transformer->slice->whole_model.total()};
  };
  const auto [fits, whole] = summary("");
  // Its line, after the memory model's: the slice's layers, then the whole model's need and verdict.
  const std::string line =
      "  model slice                     2 of 32 layers simulated: step time, throughput and "
      "memory are the slice's; the whole llama3-8b fits: " +
      workloads::format_gib(whole) + " of 80 GiB";
  CHECK(fits.table.find(line) != std::string::npos);
  CHECK(fits.table.find("memory model") < fits.table.find("model slice"));
  CHECK(fits.json.find("\n  \"layers_simulated\": 2,\n  \"layers\": 32,\n  \"whole_model_peak_bytes\": " +
                       std::to_string(whole.count()) + ",\n  \"whole_model_fits\": true") !=
        std::string::npos);
  // The slice fits 16 GiB; the whole model does not, and both say so.
  const auto [tight, same] = summary(", gpu_memory: 16 GiB");
  CHECK(same == whole);
  CHECK(tight.table.find("fits: every GPU within 16 GiB") != std::string::npos);
  CHECK(tight.table.find("the whole llama3-8b does not fit: " + workloads::format_gib(whole) +
                         " of 16 GiB (") != std::string::npos);
  CHECK(tight.json.find("\"whole_model_fits\": false") != std::string::npos);
  // Every layer simulated: no line, no members.
  const scenarios::ResolvedScenario all = resolved(
      "cluster: {preset: dgx-h100}\nparallelism: {tp: 8}\nworkload:\n  network: transformer\n"
      "  model: {layers: 2, hidden: 1024, heads: 8, ffn_hidden: 4096, vocab: 32000, sequence: 512,\n"
      "          layers_simulated: 0}\n");
  const analysis::RunSummary every = analysis::run_summary(analysis::run_scenario(all, {}), all.scenario);
  CHECK(every.table.find("model slice") == std::string::npos);
  CHECK(every.json.find("whole_model") == std::string::npos);
  CHECK(every.json.find("layers_simulated") == std::string::npos);
}

TEST_CASE("model slice: a pipeline whose stages do not divide the layers says how they split") {
  // Llama 3 8B's 32 layers over pp 3 are 10, 11 and 11 (balanced_layers, as the run splits them); the
  // line said "the layers split evenly".
  const scenarios::ResolvedScenario r = resolved(
      "cluster: {preset: dgx-h100}\nworkload: {network: llama3-8b, model: {layers_simulated: 3}}\n"
      "parallelism: {dp: 2, pp: 3}\ntraining: {micro_batch: 1, global_batch: 6}\n");
  REQUIRE(r.transformer);
  REQUIRE(r.transformer->slice);
  const std::string text = analysis::model_slice_text(*r.transformer->slice, std::nullopt);
  CHECK(text.find("pipeline stage 0 of 3 (the largest; the layers split 10, 11 x2) ") != std::string::npos);
  CHECK(text.find("evenly") == std::string::npos);
}
