// `hybridsim collective` as a request in the words a user gives (sizes and rates as unit strings,
// choices by name), so that the command line and the Python module read it alike: api::collective
// parses it once (errors name the option) and runs nccl-tests for the simulator.
//   api::CollectiveReport r = api::collective({.topology = "dgx1-v100", .max_bytes = "1 GiB"});
//   std::cout << analysis::collective_table(r.rows, r.title);
#pragma once
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include <optional>
#include <string>

#include "analysis/collective/collective_sweep.h"
#include "sim/budget.h"
#include "sim/collective.h"
#include "sim/units.h"

namespace hybridsim::api {

struct CollectiveRequest {
  std::string topology{};  // a preset name or a topology YAML file
  int nodes = 1;
  int gpus_per_node = 0;  // 0: the preset's
  std::string gpus{};     // "0-3,8"; empty: every GPU
  std::string op = "allreduce", algorithm = "auto", protocol = "auto", fast_path = "bounded";
  int channels = 0;  // 0: as NCCL would
  bool pcie_only = false;
  std::optional<std::string> fabric{};       // between machines; none: fat-tree (as topology's)
  std::optional<double> oversubscription{};  // none: 1, a full-bisection fabric
  std::string message_size = sim::format_bytes(sim::CollectiveConfig{}.message_size);
  // auto: a quarter of the preset's GPU's HBM peak (analysis::platform_reduction_bandwidth).
  std::string reduction = "auto";
  // Whether the caller gave `reduction` (not its default): an op that adds nothing up refuses it,
  // in every language (Python's collective(op='allgather', reduction=...) took it without a word).
  bool reduction_given = false;
  std::string min_bytes = "8 B", max_bytes = "256 MiB";
  double step_factor = 2.0;
  std::string max_events = std::to_string(sim::kDefaultMaxEvents);  // or "unlimited"
  std::string max_sim_memory = sim::format_bytes(sim::Bytes::of(sim::kDefaultMaxMemory));
  std::ostream* progress = nullptr;  // the sweep's estimate and progress lines (stderr in the CLI)
  // Told each of a topology file's notes (load_request_platform) before the sizes run.
  std::function<void(const std::string&)> on_note{};
  // How refusals name these fields: the command line's options, or Python's keywords.
  analysis::CollectiveOptionNames names{};
};

struct CollectiveReport {
  std::vector<analysis::CollectiveSweepRow> rows{};
  // "all-reduce over 8 GPUs of dgx1-v100, auto/auto, 2 channels, 512 KiB messages"
  std::string title{};
  std::vector<std::string> notes{};  // a topology file's links machines rarely have (stderr), as run's
};
CollectiveReport collective(const CollectiveRequest& request);

}  // namespace hybridsim::api
