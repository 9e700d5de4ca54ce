// Which physical GPUs a dp × mp strategy uses: worker w's model-parallel rank k runs on global GPU
// rank gpu_rank[w][k]. By default a worker's GPUs sit together on the fastest links of one machine
// (an NVLink-doubled pair of a DGX-1 for mp = 2, an NVLink quad for mp = 4) and the data-parallel
// groups (same k, every worker) span the machines.
//   WorkerMapping m = default_mapping(topology, /*dp=*/8, /*mp=*/2);   m.gpu_rank[0] == {0, 3}
#pragma once
#include <string>
#include <vector>

#include "topology/topology.h"

namespace hybridsim::workloads {

struct WorkerMapping {
  int dp = 1;
  int mp = 1;
  std::vector<std::vector<int>> gpu_rank;  // [worker][mp rank] → global GPU rank
  std::string description;

  // The data-parallel group of MP rank k: the global GPU ranks of every worker's rank k.
  std::vector<int> dp_group(int k) const;
  int gpu_count() const { return dp * mp; }
};

// Throws InputError when dp × mp exceeds the topology's GPUs or either is below 1.
WorkerMapping default_mapping(const topology::Topology& topology, int dp, int mp);
// Workers are given explicitly ([worker][k] → global GPU rank); checks sizes, ranges, duplicates.
WorkerMapping custom_mapping(const topology::Topology& topology, int dp, int mp,
                             std::vector<std::vector<int>> gpu_rank);

}  // namespace hybridsim::workloads
