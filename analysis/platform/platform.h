// The platform a command names: a preset from the registry (as a cluster of `nodes` machines) or
// a topology YAML file. The `topology` and `collective` commands take it as their first argument.
//   Topology t = load_platform("dgx1-v100", {.nodes = 4});
//   Topology f = load_platform("my-box.yaml", {});
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "analysis/output/option_spelling.h"
#include "sim/units.h"
#include "topology/cluster_spec.h"
#include "topology/topology.h"

namespace hybridsim::analysis {

// True when the argument names a file rather than a preset: it ends in .yaml or .yml, contains a
// '/', or an existing file has that name.
bool names_topology_file(std::string_view argument);

// Builds the preset `argument` with the spec's nodes, GPUs per machine, fabric and overrides (its
// `preset` field is ignored), or loads the file; for a file, a spec other than the default is an
// InputError ("--nodes and --gpus-per-node apply to presets, not to topology files"). Refusals name
// the options in `spelling`'s language, the argument as `option` (Python's keyword for it:
// `topology='nope': unknown topology preset ...`).
// `notes` (null: not wanted) gets a topology file's notes (topology::load_topology_yaml).
topology::Topology load_platform(const std::string& argument, topology::ClusterSpec spec,
                                 const OptionSpelling& spelling = {}, std::string_view option = "topology",
                                 std::vector<std::string>* notes = nullptr);

// The reduction rate a collective on the platform gets when none is given (`collective
// --reduction-bandwidth auto`, validate's collective cases): a quarter of the preset's GPU's HBM peak
// (workloads::reduction_bandwidth); a topology file's or an unknown GPU's: the V100's 225 GB/s.
sim::Bandwidth platform_reduction_bandwidth(const std::string& argument);

}  // namespace hybridsim::analysis
