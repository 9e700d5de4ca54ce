// Text forms of a collective sweep (analysis/collective/collective_sweep.h): an nccl-tests-style table, CSV
// and JSON. Deterministic: the same rows give the same bytes.
//   std::cout << collective_table(rows, "all-reduce over 8 GPUs of dgx1-v100, ring, 6 channels");
#pragma once
#include <string>
#include <vector>

#include "analysis/collective/collective_sweep.h"

namespace hybridsim::analysis {

std::string collective_table(const std::vector<CollectiveSweepRow>& rows, const std::string& title);
std::string collective_csv(const std::vector<CollectiveSweepRow>& rows);
std::string collective_json(const std::vector<CollectiveSweepRow>& rows, const std::string& title);

}  // namespace hybridsim::analysis
