#include "analysis/step/step_fold.h"

#include "analysis/step/step_fold_p2p.h"
#include "sim/hash.h"

#include <algorithm>
#include <bit>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace hybridsim::analysis {

namespace {

constexpr auto mix = sim::hash_combine;
std::uint64_t mix_text(std::uint64_t h, std::string_view s) {
  for (const char c : s) h = mix(h, static_cast<unsigned char>(c));
  return h;
}
// A device's name inside its machine ("n3.GPU5" → "GPU5"), a view of its name: a copy each was
// 23 M of the 16,384-GPU default step's 6.29 G instructions (callgrind, 270,336 ends of links).
std::string_view local_name(const topology::DeviceInfo& d) {
  const std::string_view name = d.name;
  const auto dot = name.find('.');
  return d.node.has_value() && dot != std::string_view::npos ? name.substr(dot + 1) : name;
}

// Per machine: a hash of the links inside it (kinds, speeds, latencies, local ends), so that
// machines wired alike hash alike.
std::vector<std::uint64_t> machine_signatures(const topology::Topology& t) {
  std::vector<std::uint64_t> sig(static_cast<std::size_t>(std::max(0, t.node_count())), 0);
  const sim::LinkTable& links = t.links();
  for (sim::LinkId l = 0; l < links.size(); ++l) {
    const topology::LinkEnds& e = t.link_ends(l);
    const topology::DeviceInfo& a = t.device(e.from);
    const topology::DeviceInfo& b = t.device(e.to);
    if (!a.node.has_value() || !b.node.has_value() || *a.node != *b.node) continue;
    std::uint64_t h = mix(static_cast<std::uint64_t>(links[l].kind),
                          static_cast<std::uint64_t>(links[l].bandwidth.bytes_per_second()));
    h = mix(mix(h, static_cast<std::uint64_t>(links[l].latency.ps())), static_cast<std::uint64_t>(e.count));
    h = mix_text(mix_text(h, local_name(a)), local_name(b));
    auto& s = sig[static_cast<std::size_t>(*a.node)];
    s += h * 0x2545F4914F6CDD1DULL + 1;  // order-independent: links are listed in build order
  }
  return sig;
}

// Per GPU: 1 when no other GPU has its speed scales (their exact bits), so that it is alone in its
// class whatever its program.
std::vector<std::uint8_t> scales_alone(const workloads::StepProgram& program) {
  using Scales = std::pair<std::uint64_t, std::uint64_t>;
  std::vector<std::pair<Scales, std::uint32_t>> by_scales;
  for (std::uint32_t g = 0; g < program.gpus.size(); ++g)
    by_scales.push_back({{std::bit_cast<std::uint64_t>(program.gpus[g].compute_scale),
                          std::bit_cast<std::uint64_t>(program.gpus[g].sample_scale)},
                         g});
  std::sort(by_scales.begin(), by_scales.end());
  std::vector<std::uint8_t> alone(program.gpus.size(), 0);
  for (std::size_t i = 0; i < by_scales.size(); ++i)
    alone[by_scales[i].second] = (i == 0 || by_scales[i - 1].first != by_scales[i].first) &&
                                 (i + 1 == by_scales.size() || by_scales[i + 1].first != by_scales[i].first);
  return alone;
}


// What a stream's tasks give its GPU's class key whichever GPU reads them: a hash of their kinds and
// kernels (the ids of kernels are labels, never shifted), and the positions of the tasks whose part
// is the GPU's own (a wait: its recorder's place; a collective: the spec its shifted index names)
// and of its records. Hashing a task's part by its shape and then its own parts in order tells
// GPUs apart exactly as hashing every task did, so the classes are the same.
struct ListShape {
  std::uint64_t hash = 0;
  std::vector<std::uint32_t> per_gpu;  // waits and collectives, in order
  std::vector<std::uint32_t> records;
};

// Shapes worked out once per shared list (sim::TaskList::same_tasks), for every GPU that reads it:
// every worker's compute and transfer streams are one list, and hashing each GPU's copy of it was
// 6.9% of a 4,096-GPU tree step's instructions (callgrind). A list of its own is read afresh.
class ListShapes {
 public:
  const ListShape& of(const sim::TaskList& tasks) {
    if (!tasks.is_shared()) {
      fill(tasks, scratch_);
      return scratch_;
    }
    const auto [it, fresh] = shared_.try_emplace(tasks.same_tasks());
    if (fresh) fill(tasks, it->second);
    return it->second;
  }
  // Its records alone: a list of its own is scanned for them, not hashed (its shape is hashed
  // when its GPU's key is, after every recorder is known; hashed twice, the 16,384-GPU default
  // step's 32,768 lists took 36 M instructions).
  const std::vector<std::uint32_t>& records(const sim::TaskList& tasks) {
    if (tasks.is_shared()) return of(tasks).records;
    scratch_.records.clear();
    for (std::uint32_t i = 0; i < tasks.size(); ++i)
      if (tasks[i].kind == sim::TaskKind::Record) scratch_.records.push_back(i);
    return scratch_.records;
  }

 private:
  static void fill(const sim::TaskList& tasks, ListShape& out) {
    out.per_gpu.clear();
    out.records.clear();
    std::uint64_t h = 0;
    for (std::uint32_t i = 0; i < tasks.size(); ++i) {
      const sim::Task t = tasks[i];
      h = mix(h, static_cast<std::uint64_t>(t.kind) | (static_cast<std::uint64_t>(t.bound) << 8) |
                     (static_cast<std::uint64_t>(t.per_sample) << 16));
      switch (t.kind) {
        case sim::TaskKind::Kernel:
          h = mix(mix(mix(h, static_cast<std::uint64_t>(t.duration.ps())),
                      static_cast<std::uint64_t>(t.launch_delay.ps())),
                  t.id);
          break;
        case sim::TaskKind::Record:
          out.records.push_back(i);
          break;
        case sim::TaskKind::Wait:
        case sim::TaskKind::Collective:
          out.per_gpu.push_back(i);
          break;
      }
    }
    out.hash = h;
  }
  std::unordered_map<const void*, ListShape> shared_;
  ListShape scratch_;
};
}  // namespace

StepFoldBasis step_fold_basis(const workloads::StepProgram& program, const topology::Topology& topology,
                              sim::WorkProgress* progress) {
  StepFoldBasis out;
  const auto gpus = static_cast<std::uint32_t>(program.gpus.size());
  const auto gpu_ids = topology.gpus();
  if (gpus < 2 || gpu_ids.size() != gpus || topology.node_count() < 2) return out;
  std::vector<int> node(gpus), local(gpus);
  for (std::uint32_t g = 0; g < gpus; ++g) {
    const topology::DeviceInfo& d = topology.device(gpu_ids[g]);
    node[g] = d.node.value_or(-1);
    local[g] = d.local_gpu.value_or(-1);
    if (node[g] < 0) return out;
  }
  ListShapes shapes;
  // Where each event is recorded, so a wait can be described by its recorder's place.
  struct Place {
    std::uint32_t gpu = 0, stream = 0, task = 0;
  };
  std::vector<Place> recorder(program.event_count);
  for (std::uint32_t g = 0; g < gpus; ++g)
    for (std::uint32_t s = 0; s < program.gpus[g].streams.size(); ++s) {
      const sim::TaskList& tasks = program.gpus[g].streams[s].tasks;
      for (const std::uint32_t i : shapes.records(tasks)) recorder[tasks[i].id] = {g, s, i};
    }
  const std::vector<std::uint64_t> machine = machine_signatures(topology);
  // Per collective: whether its members are all in one machine, found once (every member's key
  // reads it).
  std::vector<std::uint8_t> one_machine(program.collectives.size(), 1);
  for (std::size_t i = 0; i < program.collectives.size(); ++i) {
    const std::vector<int>& members = program.collectives[i].members;
    for (const int m : members)
      if (node[static_cast<std::size_t>(m)] != node[static_cast<std::size_t>(members.front())]) {
        one_machine[i] = 0;
        break;
      }
  }
  // Class key: machine wiring, index in the machine, program shape.
  std::vector<std::uint64_t> key(gpus);
  const std::vector<std::uint8_t> alone = scales_alone(program);
  for (std::uint32_t g = 0; g < gpus; ++g) {
    sim::work_tick(progress, "its classes of alike GPUs", g, gpus, "GPUs");
    const sim::GpuProgram& p = program.gpus[g];
    std::uint64_t h = mix(machine[static_cast<std::size_t>(node[g])], static_cast<std::uint64_t>(local[g]));
    // The scales' exact bits: GPUs whose speeds differ at all (stragglers) are never alike.
    h = mix(mix(h, std::bit_cast<std::uint64_t>(p.compute_scale)),
            std::bit_cast<std::uint64_t>(p.sample_scale));
    // Alone by its scales (kernel jitter gives every GPU its own): its tasks cannot make it alike
    // to another, and were hashed for nothing (2% of a jittered 128-GPU step's instructions).
    if (alone[g] != 0) {
      key[g] = h;
      continue;
    }
    for (const sim::StreamProgram& sp : p.streams) {
      // Not its name: "send→GPU11" names the partner. The tasks alike in every GPU that reads them
      // by their shape's hash, then those whose part is this GPU's own.
      const ListShape& shape = shapes.of(sp.tasks);
      h = mix(mix(h, sp.tasks.size()), shape.hash);
      for (const std::uint32_t i : shape.per_gpu) {
        const sim::Task t = sp.tasks[i];
        if (t.kind == sim::TaskKind::Wait) {
          const Place& r = recorder[t.id];
          h = mix(mix(mix(h, r.gpu == g ? 0 : 1 + static_cast<std::uint64_t>(local[r.gpu])), r.stream),
                  r.task);
          continue;
        }
        const workloads::CollectiveSpec& c = program.collectives[t.id];
        h = mix(mix(mix(h, static_cast<std::uint64_t>(c.op)), static_cast<std::uint64_t>(c.size.count())),
                c.members.size());
        h = mix(mix(h, static_cast<std::uint64_t>(c.role)), one_machine[t.id]);
      }
    }
    key[g] = h;
  }
  out.node = std::move(node);
  out.local = std::move(local);
  out.key = std::move(key);
  out.recorder_gpu.resize(recorder.size());
  for (std::size_t e = 0; e < recorder.size(); ++e) out.recorder_gpu[e] = recorder[e].gpu;
  return out;
}

void refine_classes(std::vector<std::uint64_t>& refine, const std::vector<std::uint64_t>& signature) {
  if (refine.empty()) refine.assign(signature.size(), 0);
  for (std::size_t g = 0; g < refine.size(); ++g)
    if (signature[g] != 0) refine[g] = refine[g] * 0x9E3779B97F4A7C15ULL + signature[g];
}

StepFoldPlan plan_step_fold(const workloads::StepProgram& program, const topology::Topology& topology,
                            const std::vector<std::uint64_t>& refine) {
  return plan_step_fold(program, topology, step_fold_basis(program, topology), refine);
}

namespace {

// Each GPU's representative: the first GPU of its class. A refinement splits whole machines: a GPU
// whose timeline differs splits off with the GPUs of its machine, whose model-parallel partners it
// waits on (a representative must not wait on a member).
std::vector<std::uint32_t> representatives(const StepFoldBasis& basis, const topology::Topology& topology,
                                           const std::vector<std::uint64_t>& refine) {
  const auto gpus = static_cast<std::uint32_t>(basis.key.size());
  const std::vector<int>& node = basis.node;
  std::vector<std::uint64_t> machine_refine(static_cast<std::size_t>(topology.node_count()), 0);
  if (!refine.empty())
    for (std::uint32_t g = 0; g < gpus; ++g)
      machine_refine[static_cast<std::size_t>(node[g])] =
          mix(machine_refine[static_cast<std::size_t>(node[g])], refine[g]);
  std::vector<std::uint64_t> key(basis.key);
  for (std::uint32_t g = 0; g < gpus; ++g)
    key[g] = mix(key[g], machine_refine[static_cast<std::size_t>(node[g])]);
  std::unordered_map<std::uint64_t, std::uint32_t> first;
  std::vector<std::uint32_t> rep(gpus);
  for (std::uint32_t g = 0; g < gpus; ++g) rep[g] = first.try_emplace(key[g], g).first->second;
  return rep;
}

// Shadows: collectives with no representative rank, each inside one machine, repeating the one at
// the same place in the representative's program. Fills out.shadow_of, out.fold.shadow and
// out.fold.with_members; false where the step cannot fold so (a shadow across machines, a member in
// a collective that is not its representative's).
bool find_shadows(const workloads::StepProgram& program, const StepFoldBasis& basis,
                  const std::vector<std::uint32_t>& rep, const std::vector<std::uint8_t>& is_rep,
                  StepFoldPlan& out, sim::WorkProgress* progress) {
  const auto one_machine = [&](const workloads::CollectiveSpec& c) {
    for (const int m : c.members)
      if (basis.node[static_cast<std::size_t>(m)] != basis.node[static_cast<std::size_t>(c.members.front())])
        return false;
    return true;
  };
  const auto n = program.collectives.size();
  std::vector<std::uint8_t> shadow(n, 0), with_members(n, 0);
  out.shadow_of.resize(n);
  for (std::size_t c = 0; c < n; ++c) {
    out.shadow_of[c] = static_cast<std::uint32_t>(c);
    bool any_rep = false, any_member = false;
    for (const int m : program.collectives[c].members) {
      any_rep = any_rep || is_rep[static_cast<std::size_t>(m)] != 0;
      any_member = any_member || is_rep[static_cast<std::size_t>(m)] == 0;
    }
    with_members[c] = any_rep && any_member ? 1 : 0;
    if (!any_rep) {
      // A transfer between two machines may be a shadow too; fold_p2p_shadows_exact checks it.
      if (!one_machine(program.collectives[c]) && !is_point_to_point(program.collectives[c])) return false;
      shadow[c] = 1;
    }
  }
  const auto gpus = static_cast<std::uint32_t>(rep.size());
  // A member's collectives only, found by its lists' shapes: reading every task of 16,384 members
  // was 6.5% of a GNMT DP step's instructions (callgrind).
  ListShapes shapes;
  for (std::uint32_t g = 0; g < gpus; ++g) {
    sim::work_tick(progress, "matching its members' collectives", g, gpus, "GPUs");
    if (is_rep[g] != 0) continue;
    const auto& mine = program.gpus[g].streams;
    const auto& theirs = program.gpus[rep[g]].streams;
    for (std::size_t s = 0; s < mine.size(); ++s)
      for (const std::uint32_t i : shapes.of(mine[s].tasks).per_gpu) {
        const sim::Task t = mine[s].tasks[i];
        if (t.kind != sim::TaskKind::Collective) continue;
        const sim::Task r = theirs[s].tasks[i];
        if (shadow[t.id] != 0) {
          if (shadow[r.id] != 0) return false;  // its representative's must run
          out.shadow_of[t.id] = r.id;
        } else if (t.id != r.id) {
          return false;  // a member in a collective that is not its representative's
        }
      }
  }
  sim::work_tick(progress, "matching its members' collectives", gpus, gpus, "GPUs");
  out.fold.shadow = std::move(shadow);
  out.fold.with_members = std::move(with_members);
  return true;
}

}  // namespace

StepFoldPlan plan_step_fold(const workloads::StepProgram& program, const topology::Topology& topology,
                            const StepFoldBasis& basis, const std::vector<std::uint64_t>& refine,
                            sim::WorkProgress* progress) {
  if (basis.key.empty()) return {};
  const auto gpus = static_cast<std::uint32_t>(program.gpus.size());
  std::vector<std::uint32_t> rep = representatives(basis, topology, refine);
  std::vector<std::uint8_t> is_rep(gpus, 0);
  std::uint32_t reps = 0, working = 0, working_reps = 0;
  for (std::uint32_t g = 0; g < gpus; ++g) {
    if (program.worker_of_gpu[g] >= 0) ++working;
    if (rep[g] == g) {
      is_rep[g] = 1;
      ++reps;
      if (program.worker_of_gpu[g] >= 0) ++working_reps;
    }
  }
  // Only idle GPUs alike (a cluster larger than the step: GNMT dp 8 on 4 DGX-1) is no fold of the
  // step: it ran as "folded onto representative GPUs", its trace without the network and saying its
  // rings ran without messages, where they ran message by message as on one machine.
  if (reps == gpus || working_reps == working) return {};
  // A representative must not wait on an event only a member records (members do not run).
  for (std::uint32_t g = 0; g < gpus; ++g) {
    sim::work_tick(progress, "checking its representatives' waits", g, gpus, "GPUs");
    if (is_rep[g] == 0) continue;
    for (const sim::StreamProgram& sp : program.gpus[g].streams)
      for (const sim::Task& t : sp.tasks)
        if (t.kind == sim::TaskKind::Wait && is_rep[basis.recorder_gpu[t.id]] == 0) return {};
  }
  sim::work_tick(progress, "checking its representatives' waits", gpus, gpus, "GPUs");
  StepFoldPlan out;
  if (!find_shadows(program, basis, rep, is_rep, out, progress)) return {};
  out.fold.representative = std::move(rep);
  out.representatives = reps;
  return out;
}

}  // namespace hybridsim::analysis
