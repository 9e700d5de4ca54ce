// The platform a `topology` or `collective` request names (analysis::load_platform: a preset or a
// topology file), with the file's notes as `run` has a scenario's: each told to `on_note` as soon as
// it is known (the command line's stderr, before the work) and kept in `notes` for the report
// (Python's `notes`). None for a preset.
//   std::vector<std::string> notes;
//   topology::Topology t = load_request_platform("box.yaml", spec, o, "topology", on_note, notes);
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/output/option_spelling.h"
#include "topology/cluster_spec.h"
#include "topology/topology.h"

namespace hybridsim::api {

// `option` names the argument in refusals (load_platform); `on_note` may be empty.
topology::Topology load_request_platform(const std::string& argument, const topology::ClusterSpec& spec,
                                         const analysis::OptionSpelling& spelling, std::string_view option,
                                         const std::function<void(const std::string&)>& on_note,
                                         std::vector<std::string>& notes);

}  // namespace hybridsim::api
