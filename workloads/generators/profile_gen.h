// The generator of the built-in training-step profiles: the layer shapes of Inception-V3, GNMT v2 and
// BigLSTM are encoded here (computed from the architecture definitions) and priced with a GPU cost
// model (cost_model.h: calibrated on one V100 in FP32 and AMP, derived for A100, H100 and H200).
//   Profile p = generate_builtin_profile("gnmt");      // the same bytes as profiles/v100/gnmt.yaml
//   Profile a = builtin_profile("gnmt", {.gpu = "h100", .precision = Precision::Amp});
//   Profile g8 = generate_gnmt({.layers = 8, .source_length = 25, .target_length = 25}, v100_fp32());
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/time.h"
#include "sim/units.h"
#include "workloads/gpu/cost_model.h"
#include "workloads/profile/profile.h"

namespace hybridsim::workloads {

struct InceptionConfig {
  std::int64_t batch = 64;  // images per GPU (TensorFlow benchmark default)
  bool aux_head = true;     // the auxiliary classifier on Mixed_6e, trained with the main head
};
struct GnmtConfig {
  int layers = 4;                  // encoder and decoder layers each (GNMT-4; GNMT-8 has 8)
  std::int64_t batch = 128;        // sentence pairs per GPU
  int source_length = 24;          // unrolled encoder steps
  int target_length = 24;          // unrolled decoder steps
  std::int64_t hidden = 1024;
  std::int64_t vocabulary = 32320;
  // How NVIDIA's training loop runs (../shared/reference/gnmt_training_loop.md §1, §3): the
  // one-GPU figures accumulate 8 micro-batches per update (global batch 1,024 at 128 per GPU);
  // about 10 device→host syncs per micro-batch, each a GPU bubble of tens to hundreds of µs
  // (taken as 100 µs), kept as idle time before the micro-batch's first kernel.
  int measured_micro_batches = 8;
  int host_syncs = 10;
  sim::Time host_sync_gap = sim::Time::us(100);
};
struct BigLstmConfig {
  std::int64_t batch = 128;        // sequences per GPU
  int steps = 20;                  // unrolled time steps
  int layers = 2;
  std::int64_t cells = 8192;       // LSTM cells per layer
  std::int64_t projection = 1024;  // LSTMP projection (and embedding) size
  std::int64_t vocabulary = 793470;
  std::int64_t samples = 8192;     // sampled-softmax candidates per step
};

Profile generate_inception_v3(const InceptionConfig& config, const KernelCostModel& cost);
Profile generate_gnmt(const GnmtConfig& config, const KernelCostModel& cost);
Profile generate_biglstm(const BigLstmConfig& config, const KernelCostModel& cost);

// Which cost model prices a built-in profile: a GPU of the facts table (gpu.h) by key and a
// precision. The default is the calibrated V100 FP32 model.
struct BuiltinProfileOptions {
  std::string gpu = "v100";
  Precision precision = Precision::Fp32;
};

// "inception-v3", "gnmt", "biglstm".
std::vector<std::string> builtin_profile_names();
// Where the committed copy of a V100 profile lives, relative to the repository root:
// "workloads/profiles/v100/inception_v3.yaml", ".../gnmt_amp.yaml" etc. Throws InputError for an
// unknown name.
std::string builtin_profile_path(std::string_view name, Precision precision = Precision::Fp32);
// The built-in profile with its default configuration on the options' cost model. Throws InputError
// listing the names for an unknown network, or the GPUs for an unknown GPU.
Profile generate_builtin_profile(std::string_view name, const BuiltinProfileOptions& options = {});
// The one spelling of a network's name, as profiles, curves and datasets use it: '_' becomes '-'
// ("inception_v3" → "inception-v3"), so either spelling finds the same network.
std::string canonical_network_name(std::string_view name);
// The same profile as generate_builtin_profile (generated in memory, so it needs no files at run
// time); the committed V100 YAML files are byte-identical copies, checked by
// tests/unit/profile_builtin.cpp.
Profile builtin_profile(std::string_view name, const BuiltinProfileOptions& options = {});

}  // namespace hybridsim::workloads
