#include "analysis/step/step_in_flight.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <unordered_map>

#include "sim/hash.h"
#include "sim/saturating.h"
#include "workloads/program/step_program_types.h"

namespace hybridsim::analysis {

namespace {

constexpr std::uint32_t kNoStream = std::numeric_limits<std::uint32_t>::max();

// The stream each collective's ranks are on (kNoStream where no GPU runs it), a range per
// collective: `first[c]` to `first[c + 1]`, in its ranks' order. A shared task list (sim::TaskList)
// is read for its collectives once, not per GPU: 65,536 GPUs repeat the same few lists.
struct RankStreams {
  std::vector<std::size_t> first;
  std::vector<std::uint32_t> stream;
  bool known(std::size_t c) const {
    return std::find(stream.begin() + static_cast<std::ptrdiff_t>(first[c]),
                     stream.begin() + static_cast<std::ptrdiff_t>(first[c + 1]), kNoStream) ==
           stream.begin() + static_cast<std::ptrdiff_t>(first[c + 1]);
  }
  bool same(std::size_t a, std::size_t b) const {
    return std::equal(stream.begin() + static_cast<std::ptrdiff_t>(first[a]),
                      stream.begin() + static_cast<std::ptrdiff_t>(first[a + 1]),
                      stream.begin() + static_cast<std::ptrdiff_t>(first[b]),
                      stream.begin() + static_cast<std::ptrdiff_t>(first[b + 1]));
  }
};

RankStreams rank_streams(const workloads::StepProgram& program) {
  RankStreams out;
  out.first.assign(program.collectives.size() + 1, 0);
  for (std::size_t c = 0; c < program.collectives.size(); ++c)
    out.first[c + 1] = out.first[c] + program.collectives[c].members.size();
  out.stream.assign(out.first.back(), kNoStream);
  std::unordered_map<const void*, std::vector<std::uint32_t>> positions;  // of a list's collective tasks
  for (const sim::GpuProgram& gpu : program.gpus)
    for (std::uint32_t s = 0; s < gpu.streams.size(); ++s) {
      const sim::TaskList& tasks = gpu.streams[s].tasks;
      auto [at, fresh] = positions.try_emplace(tasks.same_tasks());
      if (fresh)
        for (std::uint32_t i = 0; i < tasks.size(); ++i)
          if (tasks[i].kind == sim::TaskKind::Collective) at->second.push_back(i);
      for (const std::uint32_t i : at->second) {
        const sim::Task t = tasks[i];
        if (t.id + 1 < out.first.size() && out.first[t.id] + t.rank < out.first[t.id + 1])
          out.stream[out.first[t.id] + t.rank] = s;
      }
    }
  return out;
}

}  // namespace

InFlightLanes::InFlightLanes(const workloads::StepProgram& program) {
  const RankStreams streams = rank_streams(program);
  const std::vector<workloads::CollectiveSpec>& specs = program.collectives;
  lane_of_.resize(specs.size());
  std::vector<std::uint32_t> first;       // per lane: its first collective, which stands for its key
  std::vector<std::uint32_t> same_hash;   // per lane: the next lane whose key hashes alike
  std::unordered_map<std::uint64_t, std::uint32_t> by_hash;  // a key's hash → its latest lane
  std::unordered_map<std::uint64_t, std::uint32_t> by_root;  // a transfer's sender and stream → its lane
  constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  for (std::uint32_t c = 0; c < specs.size(); ++c) {
    const workloads::CollectiveSpec& spec = specs[c];
    // A collective some of whose ranks no stream runs is a lane of its own.
    const bool known = streams.known(c);
    // A transfer (a broadcast of two) is sent by its root alone, at most one at a time on its
    // root's stream: the transfers from one stream of one GPU are a lane of one at once.
    if (known && spec.op == sim::CollectiveOp::Broadcast && spec.members.size() == 2) {
      const std::uint64_t root =
          (static_cast<std::uint64_t>(static_cast<std::uint32_t>(spec.members[0])) << 32) |
          streams.stream[streams.first[c]];
      auto [it, fresh] = by_root.try_emplace(root, static_cast<std::uint32_t>(at_once_.size()));
      if (fresh) {
        first.push_back(c);
        same_hash.push_back(kNone);
        at_once_.push_back(1);
      }
      lane_of_[c] = it->second;
      continue;
    }
    std::uint32_t lane = kNone;
    std::uint64_t h = 0;
    if (known) {
      h = spec.members.size();
      for (std::size_t r = 0; r < spec.members.size(); ++r)
        h = sim::hash_combine(sim::hash_combine(h, static_cast<std::uint64_t>(spec.members[r])),
                              streams.stream[streams.first[c] + r]);
      const auto found = by_hash.find(h);
      for (std::uint32_t l = found == by_hash.end() ? kNone : found->second; l != kNone; l = same_hash[l])
        if (specs[first[l]].members == spec.members && streams.same(first[l], c)) {
          lane = l;
          break;
        }
    }
    if (lane == kNone) {
      lane = static_cast<std::uint32_t>(at_once_.size());
      first.push_back(c);
      at_once_.push_back(known ? 2 : 1);
      if (known) {
        auto [it, fresh] = by_hash.try_emplace(h, lane);
        same_hash.push_back(fresh ? kNone : it->second);
        it->second = lane;
      } else {
        same_hash.push_back(kNone);
      }
    }
    if (spec.op == sim::CollectiveOp::Broadcast && known)
      at_once_[lane] = std::max(at_once_[lane], static_cast<std::uint32_t>(spec.members.size()));
    lane_of_[c] = lane;
  }
}

std::uint64_t InFlightLanes::most(const std::vector<std::uint64_t>& in_flight) const {
  // Each lane's collectives gathered (counting sort by lane), its `at once` largest summed.
  std::vector<std::uint32_t> begin(at_once_.size() + 1, 0);
  const std::size_t known = std::min(in_flight.size(), lane_of_.size());
  for (std::size_t c = 0; c < known; ++c) ++begin[lane_of_[c] + 1];
  for (std::size_t l = 0; l < at_once_.size(); ++l) begin[l + 1] += begin[l];
  std::vector<std::uint64_t> by_lane(known);
  std::vector<std::uint32_t> next(begin.begin(), begin.end() - 1);
  for (std::size_t c = 0; c < known; ++c) by_lane[next[lane_of_[c]]++] = in_flight[c];
  std::uint64_t sum = 0;
  for (std::size_t l = 0; l < at_once_.size(); ++l) {
    const auto first = by_lane.begin() + begin[l], last = by_lane.begin() + begin[l + 1];
    const auto k = std::min<std::ptrdiff_t>(at_once_[l], last - first);
    if (k == 0) continue;
    std::nth_element(first, first + (k - 1), last, std::greater<>());
    for (auto it = first; it != first + k; ++it) sum = sim::add_saturating(sum, *it);
  }
  for (std::size_t c = known; c < in_flight.size(); ++c) sum = sim::add_saturating(sum, in_flight[c]);
  return sum;
}

}  // namespace hybridsim::analysis
