// Imports PipeDream's profiler graph (msr-fiddle/pipedream `*_graph.txt`: one line per module with
// forward/backward ms, activation and parameter bytes; tab-indented `nodeA -- nodeB` edges) as a
// hybridsim profile, optionally correcting its measurement artefacts (a synchronize per forward
// module; backward time leaking between neighbours). Times sim::Time, sizes sim::Bytes.
//   PipeDreamImport r = import_pipedream(load_pipedream_graph("inception_v3_graph.txt"),
//                                        {.batch = 128, .correction = PipeDreamCorrection{}});
//   r.profile.throughput_1gpu();   describe_pipedream_import(r);
#pragma once
#include "workloads/import/import_pipedream_types.h"

namespace hybridsim::workloads {

// Parses the text; errors are InputError "source:line:col: what, got \"text\"".
PipeDreamGraph parse_pipedream_graph(std::string_view text, const std::string& source_name);
PipeDreamGraph load_pipedream_graph(const std::string& path);

// Topologically sorts the nodes (ties by node number) and builds the profile: one op per node
// ("node7"), its forward and backward as one kernel each (named after the module class), activation
// bytes, parameter bytes as a dense all-reduce gradient. Input nodes become ops without kernels.
// Throws InputError on a cycle (naming its nodes and lines) or bad options.
PipeDreamImport import_pipedream(const PipeDreamGraph& graph, const PipeDreamOptions& options);

std::string describe_pipedream_import(const PipeDreamImport& import);

}  // namespace hybridsim::workloads
