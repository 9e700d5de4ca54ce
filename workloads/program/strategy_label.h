// How a step splits its GPUs, in one line that the run's strategy line and its settings'
// "parallelism" line (summary.json's context) both print: "dp 8 × mp 2 = 16 GPUs" for the 2017
// networks; a transformer's dimensions that are not 1 in Megatron's order, then what divides the
// replicas: "tp 8 × pp 8 × dp 16 = 1024 GPUs, ZeRO-1", "dp 16 = 16 GPUs, ep 8".
//   strategy_label({.dp = 2, .tp = 8, .gpus = 16, .transformer = true}) == "tp 8 × dp 2 = 16 GPUs"
#pragma once
#include <cstdint>
#include <string>

namespace hybridsim::workloads {

struct StrategyDimensions {
  int dp = 1;  // data-parallel replicas (a transformer's: GPUs / (tp × pp))
  int mp = 1;  // a 2017 network's GPUs per worker; a pipeline's stages (= pp)
  int tp = 1, pp = 1, ep = 1, zero = 0;
  int gpus = 1;
  bool transformer = false;  // never says mp: "dp 16 × mp 1" read as if mp were one of its dimensions
};

std::string strategy_label(const StrategyDimensions& d);
// "1 GPU", "8 GPUs": a count of GPUs in the number it takes (`plan --gpus 1` said "gnmt on 1 GPUs",
// a one-GPU run "dp 1 × mp 1 = 1 GPUs").
std::string gpus_text(std::int64_t n);

}  // namespace hybridsim::workloads
