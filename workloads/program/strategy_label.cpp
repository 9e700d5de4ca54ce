#include "workloads/program/strategy_label.h"

namespace hybridsim::workloads {

std::string gpus_text(std::int64_t n) { return std::to_string(n) + (n == 1 ? " GPU" : " GPUs"); }

std::string strategy_label(const StrategyDimensions& d) {
  if (!d.transformer && d.tp == 1 && d.pp == 1 && d.ep == 1 && d.zero == 0)
    return "dp " + std::to_string(d.dp) + " × mp " + std::to_string(d.mp) + " = " + gpus_text(d.gpus);
  std::string out;
  const auto dim = [&](const char* name, int n) {
    if (n > 1) out += (out.empty() ? "" : " × ") + std::string(name) + " " + std::to_string(n);
  };
  dim("tp", d.tp);
  dim("pp", d.pp);
  if (d.pp == 1) dim("mp", d.mp);
  if (d.dp > 1 || out.empty()) out += (out.empty() ? "dp " : " × dp ") + std::to_string(d.dp);
  out += " = " + gpus_text(d.gpus);
  if (d.ep > 1) out += ", ep " + std::to_string(d.ep);
  if (d.zero > 0) out += ", ZeRO-" + std::to_string(d.zero);
  return out;
}

}  // namespace hybridsim::workloads
