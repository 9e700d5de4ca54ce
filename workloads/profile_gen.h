// The generator of the built-in training-step profiles: the layer shapes of Inception-V3, GNMT v2 and
// BigLSTM are encoded here (computed from the architecture definitions) and priced with a V100 FP32
// cost model — FLOPs at an achieved rate for GEMMs and convolutions, bytes at an achieved bandwidth
// for memory-bound kernels, a per-kernel floor — calibrated on single-GPU throughputs (see README).
//   Profile p = generate_builtin_profile("gnmt");      // the same bytes as profiles/v100/gnmt.yaml
//   Profile g8 = generate_gnmt({.layers = 8, .source_length = 25, .target_length = 25}, v100_fp32());
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/time.h"
#include "sim/units.h"
#include "workloads/profile.h"

namespace hybridsim::workloads {

// Prices kernels on one GPU. Every duration is max(launch_floor, work / rate), rounded up to a
// whole nanosecond, in exact integer arithmetic (so generated files are identical on every machine).
struct GpuCostModel {
  std::string gpu;                          // "V100-SXM2-16GB"
  std::int64_t conv_flop_per_second = 0;    // effective rate of cuDNN convolutions
  std::int64_t gemm_flop_per_second = 0;    // GEMMs: LSTM gates, projections, classifiers
  sim::Bandwidth memory_bandwidth;          // achieved by memory-bound kernels (BN, ReLU, pooling)
  sim::Time launch_floor;                   // the shortest kernel

  Kernel conv(std::string name, std::int64_t flop) const;
  Kernel gemm(std::string name, std::int64_t flop) const;
  Kernel memory(std::string name, std::int64_t bytes) const;  // bytes read + written
  // The optimizer's time per GiB of parameters when it moves `passes` × the parameter bytes.
  sim::Time optimizer_time_per_gib(std::int64_t passes) const;
};

// The calibrated V100 FP32 model (values and their derivation in workloads/README.md).
GpuCostModel v100_fp32();

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

Profile generate_inception_v3(const InceptionConfig& config, const GpuCostModel& cost);
Profile generate_gnmt(const GnmtConfig& config, const GpuCostModel& cost);
Profile generate_biglstm(const BigLstmConfig& config, const GpuCostModel& cost);

// "inception-v3", "gnmt", "biglstm".
std::vector<std::string> builtin_profile_names();
// Where the committed copy lives, relative to the repository root:
// "workloads/profiles/v100/inception_v3.yaml" etc. Throws InputError for an unknown name.
std::string builtin_profile_path(std::string_view name);
// The built-in profile with its default configuration on v100_fp32(). Throws InputError listing the
// names for an unknown one.
Profile generate_builtin_profile(std::string_view name);
// The one spelling of a network's name, as profiles, curves and datasets use it: '_' becomes '-'
// ("inception_v3" → "inception-v3"), so either spelling finds the same network.
std::string canonical_network_name(std::string_view name);
// The same profile as generate_builtin_profile (generated in memory, so it needs no files at run
// time); the committed YAML files are byte-identical copies, checked by tests/unit/profile_builtin.cpp.
Profile builtin_profile(std::string_view name);

}  // namespace hybridsim::workloads
