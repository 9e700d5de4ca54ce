// The step cache's first phase (study_step_resolve.h): each request's scenario read from its overlay
// and resolved the way `hybridsim run` resolves a scenario, with the hashes that tell steps apart (of
// the cluster section, the built topology and the profile). A file of its own: what identifies a step
// is one concern, estimating and simulating the steps (study_step_run.cpp) another.
#include "analysis/study/study_step_resolve.h"

#include <charconv>
#include <memory>
#include <string>

#include "analysis/step/step_estimate.h"
#include "scenarios/loader/resolve.h"
#include "sim/budget.h"
#include "sim/error.h"
#include "sim/units.h"
#include "topology/builder.h"
#include "workloads/profile/profile_io.h"
#include "workloads/program/mapping.h"

namespace hybridsim::analysis::steps_detail {
namespace {

// Where an overlay's unwritten fields are "located" in its error messages.
constexpr const char* kOverlaySource = "step overlay";

std::string number(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// What identifies a built topology: its name and link table (each link's kind, bandwidth, latency
// and name, which says the devices it joins). A single machine's is the same whatever InfiniBand
// bandwidth its cluster section names: it has no InfiniBand.
std::uint64_t topology_hash(const topology::Topology& t) {
  std::string s = t.name() + ";gpus=" + std::to_string(t.gpus().size()) + ";";
  for (const sim::LinkSpec& l : t.links().all())
    s += std::to_string(static_cast<int>(l.kind)) + "," + std::to_string(l.bandwidth.bytes_per_second()) +
         "," + std::to_string(l.latency.ps()) + "," + l.name + ";";
  return fnv1a(s);
}

// What the topology is built from (scenarios::build_topology): the resolved cluster section.
std::string cluster_fingerprint(const scenarios::ClusterSettings& c) {
  std::string s =
      "preset=" + c.preset + ";topology=" + c.topology.string() + ";nodes=" + std::to_string(c.nodes) +
      ";gpus_per_node=" + (c.gpus_per_node ? std::to_string(*c.gpus_per_node) : "auto") +
      ";fabric=" + std::string(topology::presets::fabric_name(c.fabric)) +
      ";oversubscription=" + number(c.oversubscription) + ";leaf_radix=" + std::to_string(c.leaf_radix) +
      ";spines=" + (c.spines ? std::to_string(*c.spines) : "auto") + ";";
  for (int k = 0; k < sim::kLinkKindCount; ++k) {
    const auto& o = c.links[static_cast<sim::LinkKind>(k)];
    s += "links." + std::string(sim::link_kind_key(static_cast<sim::LinkKind>(k))) + "=" +
         (o.bandwidth ? std::to_string(o.bandwidth->bytes_per_second()) : "-") + "," +
         (o.latency ? std::to_string(o.latency->ps()) : "-") + ";";
  }
  return s;
}

StepLabel label_of(const StepRequest& request, const scenarios::Scenario& s, const workloads::StepConfig& c) {
  using Kind = scenarios::PlacementSettings::Kind;
  StepLabel l;
  l.network = request.network;
  l.mp = s.parallelism.mp;
  l.gpus = s.parallelism.dp * s.parallelism.mp;
  const Kind kind = s.parallelism.placement.kind;
  l.partitioner = kind == Kind::Stacks     ? workloads::Partitioner::Stacks
                  : kind == Kind::Branches ? workloads::Partitioner::Branches
                                           : workloads::Partitioner::Layers;
  l.ib_bytes_per_second = topology::ib_bandwidth_of(s.cluster).bytes_per_second();
  l.bucket_bytes = c.step.bucket_size.count();
  l.algorithm = c.comm.algorithm;
  l.message_bytes = c.collective.message_size.count();
  l.fast_path = c.collective.fast_path;
  return l;
}

// Every GPU's share of its worker's kernels: the tasks of a request's program, which its estimate
// builds for every GPU whatever folds (dp workers of the profile's kernels, forward and backward).
double tasks_to_estimate(const scenarios::Scenario& s, const workloads::Profile& profile) {
  return static_cast<double>(s.parallelism.dp) * static_cast<double>(event_floor(profile) / 2);
}

}  // namespace

StepId fnv1a(std::string_view text) {
  std::uint64_t h = 14695981039346656037ull;
  for (const unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

StepLabel label_before_resolving(const StepRequest& request, const scenarios::Scenario& s) {
  workloads::StepConfig c;
  c.step.bucket_size = s.communication.bucket_size;
  c.comm.algorithm = s.communication.algorithm;
  c.collective.message_size = s.communication.message_size;
  c.collective.fast_path = s.communication.fast_path;
  return label_of(request, s, c);
}

void refuse_under_event_floor(const StepRequest& request, const scenarios::Scenario& s,
                              const workloads::Profile& p, const BudgetKnobs& knobs) {
  try {
    check_event_floor(p, s.simulation.max_events);
  } catch (const sim::BudgetExceeded& e) {
    const bool off = s.communication.fast_path == sim::FastPath::Off;
    throw budget_refusal(describe(label_before_resolving(request, s)), e, "the step", knobs, off);
  }
}

scenarios::Scenario Resolver::read(const StepRequest& request) {
  return scenarios::parse_scenario("", kOverlaySource, request.overlay);
}

Resolved Resolver::resolve(const StepRequest& request, const scenarios::Scenario& s,
                           sim::WorkProgress* progress) {
  const auto it = context_.profiles.find(request.network);
  if (it == context_.profiles.end() || it->second == nullptr)
    throw InternalError("no profile for step network \"" + request.network + "\"");
  const workloads::Profile& profile = *it->second;
  Built& built = topologies_[cluster_fingerprint(s.cluster)];
  if (!built.topology) {
    built.topology = std::make_unique<topology::Topology>(scenarios::build_topology(s, progress));
    built.hash = topology_hash(*built.topology);
  }
  const auto& topology = built.topology;
  Resolved r;
  r.config = scenarios::resolve_step_config(s, *topology, profile);
  r.fingerprint = "profile=" + std::to_string(profile_hash(request.network, profile)) +
                  ";topology=" + std::to_string(built.hash) + ";" + workloads::fingerprint(r.config);
  r.id = fnv1a(r.fingerprint);
  r.label = label_of(request, s, r.config);
  r.profile = &profile;
  r.topology = topology.get();
  return r;
}

std::uint64_t Resolver::profile_hash(const std::string& network, const workloads::Profile& profile) {
  auto [it, added] = profile_hashes_.try_emplace(network, 0);
  if (added) it->second = fnv1a(workloads::profile_to_yaml(profile));
  return it->second;
}

ReadRequests read_requests(const std::vector<StepRequest>& requests) {
  ReadRequests out{.scenarios = std::vector<std::optional<scenarios::Scenario>>(requests.size()),
                   .unreadable = std::vector<std::exception_ptr>(requests.size()),
                   .weights = {}};
  for (std::size_t i = 0; i < requests.size(); ++i) {
    try {
      out.scenarios[i] = Resolver::read(requests[i]);
    } catch (const InputError&) {
      out.unreadable[i] = std::current_exception();
    }
    const auto& p = out.scenarios[i] ? out.scenarios[i]->parallelism : scenarios::ParallelismSettings{};
    out.weights.push_back(static_cast<double>(p.dp) * p.mp * p.tp);
  }
  return out;
}

void tell_work_after_resolving(ProgressEstimate& resolving, const ReadRequests& read,
                               const std::vector<StepRequest>& requests, const StepRunContext& context) {
  double tasks = 0;
  std::uint64_t floor = 0;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const auto it = context.profiles.find(requests[i].network);
    if (!read.scenarios[i] || it == context.profiles.end() || it->second == nullptr) continue;
    tasks += tasks_to_estimate(*read.scenarios[i], *it->second);
    floor += event_floor(*it->second);
  }
  resolving.set_after((tasks + static_cast<double>(floor)) / sim::kEventsPerSecond,
                      "its steps' estimating and simulation after: about " +
                          sim::BudgetExceeded::count_text(static_cast<std::uint64_t>(tasks)) +
                          " GPUs' tasks to estimate and at least " + sim::BudgetExceeded::count_text(floor) +
                          " events to simulate, at " +
                          sim::BudgetExceeded::count_text(static_cast<std::uint64_t>(sim::kEventsPerSecond)) +
                          " a second, none estimated yet");
}

}  // namespace hybridsim::analysis::steps_detail
