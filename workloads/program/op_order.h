// The order in which each GPU of one model-parallel worker runs its ops, as a dataflow executor
// (TensorFlow's, PyTorch's autograd engine) would: a list schedule that starts, on each GPU, the
// ready op that can start first. Forward follows the graph; backward follows it reversed (an op's
// backward waits for the backward of all its consumers). Only the order is kept: the simulation
// itself decides the times. Cross-GPU edges are charged activation_bytes / transfer_bandwidth.
//   OpOrder o = order_ops(profile, placement, Bandwidth::gb_per_second(25));
//   o.forward[1] == ops GPU 1 runs in the forward pass, in order
#pragma once
#include <cstdint>
#include <vector>

#include "sim/units.h"
#include "workloads/profile/profile.h"
#include "workloads/program/placement.h"

namespace hybridsim::workloads {

struct OpOrder {
  std::vector<std::vector<std::uint32_t>> forward;   // [mp rank] → op indices
  std::vector<std::vector<std::uint32_t>> backward;  // [mp rank] → op indices
};

OpOrder order_ops(const Profile& profile, const MpPlacement& placement,
                  sim::Bandwidth transfer_bandwidth);

}  // namespace hybridsim::workloads
