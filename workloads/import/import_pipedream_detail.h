// The steps of the PipeDream importer (import_pipedream), each tested on its own (not a public
// API): the topological order, the times as recorded, the forward correction, the runs of
// neighbours and the backward spread over them, and the profile's ops. Node indices are into
// graph.nodes; times sim::Time.
//   std::vector<std::vector<std::size_t>> preds;
//   auto order = topological_order(graph, index_of_nodes(graph), preds);
//   NodeTimes t = recorded_times(graph, report);   correct_forward(graph, correction, t, report);
#pragma once
#include <cstddef>
#include <map>
#include <vector>

#include "workloads/import/import_pipedream_types.h"

namespace hybridsim::workloads::pipedream_detail {

// Throws InputError on options no import can satisfy (batch below 1, negative correction times).
void check_options(const PipeDreamOptions& options);

// node id → index into graph.nodes.
std::map<int, std::size_t> index_of_nodes(const PipeDreamGraph& graph);

// Node indices in topological order, ties by node number; `preds` gets each node's producers (in
// edge order). Throws InputError naming up to 8 nodes (and their lines) on a cycle.
std::vector<std::size_t> topological_order(const PipeDreamGraph& graph,
                                           const std::map<int, std::size_t>& index_of,
                                           std::vector<std::vector<std::size_t>>& preds);

// Forward and backward time per node (index into graph.nodes).
struct NodeTimes {
  std::vector<sim::Time> forward, backward;
};

// The times as recorded, zero for input nodes (whose time, loading the batch, is counted in
// report.input_nodes / input_time); the others' sums in report.forward_recorded / backward_recorded.
NodeTimes recorded_times(const PipeDreamGraph& graph, PipeDreamImportReport& report);

// Every non-input forward time above the floor loses the synchronization overhead, floored at
// min_forward (counted in report.floored); a time at or below the floor is left as it is.
void correct_forward(const PipeDreamGraph& graph, const PipeDreamCorrection& correction, NodeTimes& times,
                     PipeDreamImportReport& report);

// The runs of neighbours with more than one node, in topological order: maximal chains u → v → ...
// where each node has exactly one consumer and that consumer exactly one producer (input nodes
// left out).
std::vector<std::vector<std::size_t>> neighbour_runs(const PipeDreamGraph& graph,
                                                     const std::vector<std::vector<std::size_t>>& preds,
                                                     const std::vector<std::size_t>& order);

// Spreads `total` over the weights exactly (cumulative rounding, so the parts sum to `total`).
std::vector<sim::Time> apportion(sim::Time total, const std::vector<sim::Time>& weights);

// Within each run with forward time, the run's backward total spread in proportion to the forward
// times (report.runs, longest_run count those).
void redistribute_backward(const std::vector<std::vector<std::size_t>>& runs, NodeTimes& times,
                           PipeDreamImportReport& report);

// The profile's metadata: network from the file name unless given, the options, and notes saying
// what the correction did.
ProfileMetadata pipedream_metadata(const PipeDreamGraph& graph, const PipeDreamOptions& options);

// One op per node in `order` ("node7", inputs from `preds`), with one forward and one backward
// kernel named after the module class when their time is positive, activation bytes and parameter
// bytes as a dense all-reduce gradient; report.forward / backward sum the times kept.
std::vector<Op> pipedream_ops(const PipeDreamGraph& graph, const std::vector<std::size_t>& order,
                              const std::vector<std::vector<std::size_t>>& preds, const NodeTimes& times,
                              PipeDreamImportReport& report);

// "inception_v3" from ".../inception_v3_graph.txt"; "pipedream" when nothing is left.
std::string default_network(const std::string& source);

}  // namespace hybridsim::workloads::pipedream_detail
