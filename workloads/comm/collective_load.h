// What a collective takes from the GPUs it runs on while it runs (sim::CollectiveLoad), from its
// role and its plan, for the stream executor's contention model (sim/stream_executor.h):
//  - data-parallel collectives are NCCL kernels: one CTA, i.e. one SM, per channel (NCCL's
//    documented use of the hardware, ../shared/reference/nccl.md), and 3 bytes of memory traffic per
//    byte a rank receives (written into its receive buffer by the peer, read back, and either read
//    with the local input to reduce it or written to the output: as the reduction's 900/4 GB/s
//    default assumes); a rank receives on every channel at that channel's rate: the bandwidth of
//    its most loaded link, shared by the collective's channels that cross it;
//  - model-parallel activations and their gradients are device-to-device copies (what PyTorch's
//    tensor.to(device) and TensorFlow's send/recv do): copy engines, no SMs, and 1 byte of memory
//    traffic per byte at each end.
// A chained (hierarchical) collective takes what its largest phase takes.
//   sim::CollectiveLoad l = collective_load(spec, plan, topology.links());
#pragma once
#include "sim/link.h"
#include "sim/stream_executor.h"
#include "workloads/comm/comm_plan.h"
#include "workloads/program/step_program.h"

namespace hybridsim::workloads {

// The rate one rank receives at over all channels of a part, in B/s: the sum over channels of
// min over the links of its routes of (bandwidth / channels of this part crossing that link).
sim::Bandwidth part_receive_rate(const sim::CollectiveChain::Part& part, const sim::LinkTable& links);

sim::CollectiveLoad collective_load(const CollectiveSpec& spec, const CollectivePlan& plan,
                                    const sim::LinkTable& links);

}  // namespace hybridsim::workloads
