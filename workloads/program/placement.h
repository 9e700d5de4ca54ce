// Model-parallel placement: which of a data-parallel worker's `mp` GPUs runs each op of a profile.
// Ways to get one: explicit rules (op-name or layer glob patterns → GPU index, first match wins),
// a depth partitioner (contiguous layers, balanced compute: splits LSTM stacks by layer), a stack
// partitioner (each encoder/decoder stack split by depth) and a branch partitioner (parallel
// branches of a block spread over GPUs: Inception's towers).
//   MpPlacement p = partition_layers(profile, 2);   p.gpu_of_op[profile.op_by_name("enc.L2.t3")] == 1
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/time.h"
#include "workloads/profile/profile.h"

namespace hybridsim::workloads {

struct MpPlacement {
  int mp = 1;
  std::vector<std::uint32_t> gpu_of_op;  // index: op; value in [0, mp)
  std::string description;               // how it was made, for reports

  // Forward + backward kernel time on each of the mp GPUs (for balance reports).
  std::vector<sim::Time> compute_per_gpu(const Profile& profile) const;
  // Activation bytes that cross between GPUs in the forward pass (each producer counted once per
  // consuming GPU); the backward pass moves the same again.
  sim::Bytes cut_bytes(const Profile& profile) const;
  // How many of the mp GPUs get an op, and the first that gets none (mp when every one does): a
  // partitioner given more GPUs than the profile has layers or stacks leaves some idle.
  int gpus_with_ops() const;
  int first_idle_gpu() const;
  bool uses_every_gpu() const { return first_idle_gpu() == mp; }
  // "gives only 5 of its 16 GPUs ops (GPU 5 would stay idle)", for refusals and notes.
  std::string idle_gpus_text() const;
};

struct PlacementRule {
  std::string pattern;  // glob (*, ?, [..]) matched against the op's name and its layer
  int gpu = 0;
  std::string where;    // where the rule was written (file:line:col), for error messages
};

enum class Partitioner : std::uint8_t { Layers, Stacks, Branches };
std::string_view partitioner_name(Partitioner p);  // "layers", "stacks", "branches"
Partitioner parse_partitioner(std::string_view text);  // throws InputError listing the choices

// Everything on GPU 0 (mp = 1, or a deliberately unbalanced what-if).
MpPlacement place_all_on_first(const Profile& profile, int mp);
// Rules in order, first match wins. Throws InputError (naming rule.where) when a rule's GPU is out
// of range or its pattern matches no op, and when an op matches no rule.
MpPlacement place_by_rules(const Profile& profile, int mp, std::span<const PlacementRule> rules);
// Layers (in order of first appearance) cut into mp contiguous groups minimizing the largest
// group's compute; all time steps of a recurrent layer stay together.
MpPlacement partition_layers(const Profile& profile, int mp);
// Each stack of layers (layers named <stack>.<...>, e.g. GNMT's enc.L0..enc.L3 and dec.L0..dec.L3)
// cut by depth over the GPUs, balanced by compute, as the GNMT paper places one layer per GPU, so
// that encoder and decoder each pipeline as a wavefront; layers outside stacks (embedding,
// attention, classifier) go to the GPU holding most of their inputs.
MpPlacement partition_stacks(const Profile& profile, int mp);
// Inside each layer, chains of ops between a fork and a join (parallel branches) are spread over the
// GPUs, longest first onto the least-loaded GPU; forks, joins and layers without branches stay on the
// GPU that holds most of their inputs.
MpPlacement partition_branches(const Profile& profile, int mp);
MpPlacement partition(const Profile& profile, int mp, Partitioner partitioner);
// The documented default for a network: branches for Inception-V3 (its towers run in parallel),
// stacks for GNMT (encoder and decoder each split by depth, as in the GNMT paper), layers for
// BigLSTM and anything else (wavefront pipelining across the stack).
Partitioner default_partitioner(const Profile& profile);

// True when `text` matches the glob `pattern` (POSIX fnmatch without flags).
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace hybridsim::workloads
