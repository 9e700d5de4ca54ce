// Hand-made profiles for tests whose answers can be derived by hand: the common metadata (32
// samples per worker, SGD at 1 ms per GiB of parameters) and one-kernel ops.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "workloads/profile/profile.h"

namespace hybridsim::testing {

inline workloads::Profile toy_profile(const std::string& network = "toy") {
  workloads::Profile p;
  p.meta.network = network;
  p.meta.batch_per_gpu = 32;
  p.meta.units_per_step = 32;
  p.meta.throughput_unit = "samples";
  p.optimizer = {"sgd", sim::Time::ms(1)};  // 1 ms per GiB of parameters
  return p;
}

// An op of one forward kernel "f" and one backward kernel "b"; dense all-reduce when it has
// gradients. `layer` defaults to the op's name.
inline workloads::Op toy_op(const std::string& name, std::vector<std::uint32_t> inputs, sim::Time fwd,
                            sim::Time bwd, sim::Bytes grad, sim::Bytes act = sim::Bytes::mib(1),
                            const std::string& layer = "") {
  workloads::Op op;
  op.name = name;
  op.layer = layer.empty() ? name : layer;
  op.inputs = std::move(inputs);
  op.forward = {{"f", fwd}};
  op.backward = {{"b", bwd}};
  op.activation_bytes = act;
  op.gradient_bytes = grad;
  op.exchange =
      grad.count() > 0 ? workloads::GradientExchange::DenseAllReduce : workloads::GradientExchange::None;
  return op;
}

// A chain op0 → op1 → … of n such ops, 1 ms forward, 2 ms backward and `grad` of gradients each.
inline workloads::Profile toy_chain(int n, sim::Bytes grad = sim::Bytes::mib(4)) {
  workloads::Profile p = toy_profile();
  for (int i = 0; i < n; ++i)
    p.ops.push_back(
        toy_op("op" + std::to_string(i),
               i == 0 ? std::vector<std::uint32_t>{} : std::vector<std::uint32_t>{std::uint32_t(i - 1)},
               sim::Time::ms(1), sim::Time::ms(2), grad));
  workloads::validate_profile(p);
  return p;
}

}  // namespace hybridsim::testing
