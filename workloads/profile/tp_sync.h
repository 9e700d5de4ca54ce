// A tensor-parallel collective of one rank between two of its kernels (the transformer generator,
// workloads/generators/transformer_gen.h, emits them; tensor_parallel.h puts them in a program).
#pragma once
#include <cstdint>

#include "sim/collective.h"
#include "sim/units.h"

namespace hybridsim::workloads {

// Issued on the compute stream right after kernel `after` of op `op`'s forward (or backward)
// kernels: nothing runs on the rank until it is done.
struct TpSync {
  std::uint32_t op = 0;
  bool backward = false;
  std::uint32_t after = 0;
  sim::CollectiveOp kind = sim::CollectiveOp::AllReduce;
  sim::Bytes bytes;  // the whole buffer (b·s·h values): all-reduced, or scattered/gathered in t parts
  bool operator==(const TpSync&) const = default;
};

}  // namespace hybridsim::workloads
