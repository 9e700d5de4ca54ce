// The rings of one try at a step that share links, embedded together (private to analysis/step/;
// sim/fast/ring_embedding.h): made before the collectives start, where a folded step's members must
// stand where their representatives' rings repeat; set to run with the links a folded step's models
// meet live shared, and to stop at the first interference.
//   auto rings = embed_rings(program, fold, network, collectives, progress, embedded, attempt);
//   set_embedded_to_run(topology, fold, embedded, network);
#pragma once
#include <optional>
#include <vector>

#include "analysis/step/attempt_collectives.h"
#include "analysis/step/step_attempt.h"
#include "analysis/step/step_fold.h"
#include "analysis/step/step_runner.h"
#include "sim/fast/embedded_ring.h"
#include "sim/fast/ring_embedding.h"
#include "sim/link.h"
#include "sim/network.h"
#include "sim/work_progress.h"
#include "topology/topology.h"
#include "workloads/program/step_program.h"

namespace hybridsim::analysis {

// The rings that share links, embedded together before the collectives start (told ring by ring;
// `progress` null: not told), each expecting its share of the step's interruptions: per collective,
// the embedded ring it became, if any. nullopt if a folded step's members stand where their
// representatives' rings do not repeat (attempt says so, its signature splitting the classes): the
// fold breaks before it runs. What simulate_once runs and estimate_once counts, alike.
std::optional<std::vector<sim::EmbeddedRing*>> embed_rings(const workloads::StepProgram& program,
                                                           const StepFoldPlan& fold, sim::Network& network,
                                                           StepCollectives& collectives,
                                                           sim::WorkProgress* progress,
                                                           sim::EmbedPlan& embedded, Attempt& attempt);

// simulate_once's embedded rings (none: nothing to do) set to run: a folded step's links that its
// models meet live shared, and a stop at the first interference (the embedded rings' run is then
// thrown away, simulate_attempt).
void set_embedded_to_run(const topology::Topology& topology, const StepFoldPlan& fold,
                         const sim::EmbedPlan& embedded, sim::Network& network);

// The links where a folded try's embedded rings meet other transfers live (representative_links;
// none where every GPU is simulated or nothing is embedded).
std::vector<sim::LinkId> embedding_tolerated(const StepSetup& setup, const StepFoldPlan& fold,
                                             const AttemptStage& stage);

}  // namespace hybridsim::analysis
