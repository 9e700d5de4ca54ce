#include "analysis/step/attempt_embedding.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "analysis/step/attempt_stage.h"
#include "analysis/step/fold_forecast.h"
#include "sim/fast/link_claims.h"
#include "sim/hash.h"

namespace hybridsim::analysis {

namespace {

// The most tasks of any GPU simulated: each of its tasks' events on the step's queue ends an
// embedded group's jump (sim::EmbedPlan::expect_interruptions); GPUs of a data-parallel group run
// their tasks at the same times, so one GPU's count stands for them.
std::uint64_t most_tasks_simulated(const workloads::StepProgram& program, const StepFoldPlan& fold) {
  std::uint64_t most = 0;
  for (std::size_t g = 0; g < program.gpus.size(); ++g) {
    if (!fold.empty() && fold.fold.representative[g] != g) continue;
    std::uint64_t own = 0;
    for (const sim::StreamProgram& stream : program.gpus[g].streams) own += stream.tasks.size();
    most = std::max(most, own);
  }
  return most;
}

// An embedded ring's position p repeats position p mod its window: a member GPU sees what its
// representative does only if they stand at positions that repeat each other in every embedded ring.
// If not, the fold is broken before it runs, and each GPU's signature names its positions' classes.
bool embedded_classes_agree(const workloads::StepProgram& program,
                            const std::vector<sim::EmbeddedRing*>& rings, const StepFoldPlan& fold,
                            Attempt& attempt) {
  std::vector<std::uint64_t> signature(program.gpus.size(), 0);
  for (std::size_t i = 0; i < rings.size(); ++i) {
    // A ring among representatives alone (a TP group's) has no member to stand at its positions;
    // its shadows repeat it as a whole.
    if (rings[i] == nullptr || !spans_members(fold, program.collectives[i])) continue;
    const std::vector<int>& gpus = program.collectives[i].members;
    for (std::uint32_t c = 0; c < rings[i]->ring().channel_count(); ++c) {
      const sim::RingChannel& plan = rings[i]->ring().channel_plan(c);
      const std::uint32_t w = rings[i]->window(c);
      for (std::uint32_t p = 0; p < plan.order.size(); ++p) {
        std::uint64_t& s = signature[static_cast<std::size_t>(gpus[plan.order[p]])];
        s = sim::hash_combine(sim::hash_combine(s, c), p % w + 1);
      }
    }
  }
  for (std::size_t g = 0; g < signature.size(); ++g)
    if (signature[g] != signature[fold.fold.representative[g]]) {
      attempt.fold_broken = true;
      attempt.signature = std::move(signature);
      return false;
    }
  return true;
}

// The links where a folded step's other transfers (a model-parallel stage's activation copies) meet
// its embedded rings live (sim::LinkClaims::share): those the models simulate themselves, inside
// machines whose GPUs are all representatives. Every transfer crossing such a link is simulated (a
// shadow runs on members' machines only), and a member's link that the models stand for sees its
// representative's transfers at the same times where the fold holds (checked after the run).
// Fabric links, which a shadow transfer between machines may cross, are not shared. Sorted.
std::vector<sim::LinkId> representative_links(const topology::Topology& topology, const StepFoldPlan& fold,
                                              const sim::EmbedPlan& embedded) {
  std::vector<std::uint8_t> whole(static_cast<std::size_t>(topology.node_count()), 1);
  for (std::uint32_t g = 0; g < fold.fold.representative.size(); ++g)
    if (fold.fold.representative[g] != g)
      whole[static_cast<std::size_t>(topology.device(topology.gpu(static_cast<int>(g))).node.value())] = 0;
  const auto inside = [&](topology::DeviceId d) {
    const std::optional<int> node = topology.device(d).node;
    return node.has_value() && whole[static_cast<std::size_t>(*node)] != 0;
  };
  std::vector<sim::LinkId> out;
  for (const auto& group : embedded.groups)
    for (const sim::LinkId l : group->simulated_links())
      if (inside(topology.link_ends(l).from) && inside(topology.link_ends(l).to)) out.push_back(l);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

std::optional<std::vector<sim::EmbeddedRing*>> embed_rings(const workloads::StepProgram& program,
                                                           const StepFoldPlan& fold, sim::Network& network,
                                                           StepCollectives& collectives,
                                                           sim::WorkProgress* progress,
                                                           sim::EmbedPlan& embedded, Attempt& attempt) {
  embedded = sim::embed_coupled_rings(collectives.owned, network, progress);
  embedded.expect_interruptions(most_tasks_simulated(program, fold));
  std::vector<sim::EmbeddedRing*> rings;
  for (std::size_t i = 0; i < collectives.owned.size(); ++i) {
    rings.push_back(dynamic_cast<sim::EmbeddedRing*>(collectives.owned[i].get()));
    if (collectives.pointers[i] != nullptr) collectives.pointers[i] = collectives.owned[i].get();
  }
  if (!fold.empty() && embedded.rings > 0 && !embedded_classes_agree(program, rings, fold, attempt))
    return std::nullopt;
  return rings;
}

void set_embedded_to_run(const topology::Topology& topology, const StepFoldPlan& fold,
                         const sim::EmbedPlan& embedded, sim::Network& network) {
  if (embedded.rings == 0) return;
  sim::LinkClaims& claims = sim::LinkClaims::of(network);
  if (!fold.empty()) {
    claims.mirror_shared(embedded.ghost.get());
    for (const sim::LinkId l : representative_links(topology, fold, embedded)) claims.share(l);
  }
  claims.stop_when_interfered();
}

std::vector<sim::LinkId> embedding_tolerated(const StepSetup& setup, const StepFoldPlan& fold,
                                             const AttemptStage& stage) {
  return fold.empty() || stage.embedded.rings == 0
             ? std::vector<sim::LinkId>{}
             : representative_links(*setup.topology, fold, stage.embedded);
}

}  // namespace hybridsim::analysis
