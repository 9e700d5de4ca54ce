#include "topology/gpu_list.h"

#include <algorithm>
#include <string>

#include "sim/error.h"
#include "sim/text.h"
#include "topology/topology.h"

namespace hybridsim::topology {

namespace {

// The listed ranks, sorted, a GPU listed twice kept twice; nullopt when the text is not of the form.
std::optional<std::vector<int>> listed_gpus(std::string_view text) {
  if (sim::trim(text).empty()) return std::nullopt;
  std::vector<int> out;
  std::string_view rest = text;
  while (true) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const auto dash = item.find('-');
    const auto first = sim::parse_whole<int>(sim::trim(item.substr(0, dash)));
    const auto last =
        dash == std::string_view::npos ? first : sim::parse_whole<int>(sim::trim(item.substr(dash + 1)));
    if (!first || !last || *first < 0 || *last < *first || *last > kMaxListedGpu) return std::nullopt;
    for (int g = *first; g <= *last; ++g) out.push_back(g);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::optional<std::vector<int>> try_parse_gpu_list(std::string_view text) {
  auto out = listed_gpus(text);
  if (out && std::adjacent_find(out->begin(), out->end()) != out->end()) return std::nullopt;
  return out;
}

std::optional<GpuListProblem> gpu_list_problem(std::string_view text) {
  // Item by item, for a range written backwards or a rank past the cap: the form alone said neither
  // ("7-0" was refused as if it were not a range at all).
  for (std::string_view rest = text;;) {
    const auto comma = rest.find(',');
    const std::string_view item = sim::trim(rest.substr(0, comma));
    const auto dash = item.find('-');
    const auto first = sim::parse_whole<long long>(sim::trim(item.substr(0, dash)));
    const auto last = dash == std::string_view::npos
                          ? first
                          : sim::parse_whole<long long>(sim::trim(item.substr(dash + 1)));
    if (first && last && *first >= 0 && *last < *first)
      return GpuListProblem{"the range " + std::string(item) + "'s first GPU is after its last: write " +
                                std::to_string(*last) + "-" + std::to_string(*first),
                            ""};
    for (const auto rank : {first, last})
      if (rank && *rank > kMaxListedGpu)
        return GpuListProblem{"GPU " + std::to_string(*rank) + " is past " + std::to_string(kMaxListedGpu) +
                                  ", the largest rank a list may name",
                              ""};
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  const auto out = listed_gpus(text);
  if (!out) return std::nullopt;
  const auto twice = std::adjacent_find(out->begin(), out->end());
  if (twice == out->end()) return std::nullopt;
  return GpuListProblem{"GPU " + std::to_string(*twice) + " is listed twice", "each GPU once"};
}

std::vector<int> parse_gpu_list(std::string_view text) {
  if (auto gpus = try_parse_gpu_list(text)) return std::move(*gpus);
  if (const auto problem = gpu_list_problem(text))
    throw InputError("GPU list \"" + std::string(text) + "\": " + problem->why + "; expected " +
                     (problem->expected.empty() ? std::string(kGpuListForm) : problem->expected));
  throw InputError("GPU list \"" + std::string(text) + "\": expected " + std::string(kGpuListForm));
}

std::string format_gpu_list(const std::vector<int>& gpus) {
  std::string out;
  for (std::size_t i = 0; i < gpus.size();) {
    std::size_t j = i;
    while (j + 1 < gpus.size() && gpus[j + 1] == gpus[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(gpus[i]) + (j > i ? "-" + std::to_string(gpus[j]) : "");
    i = j + 1;
  }
  return out;
}

void check_gpus_exist(const std::vector<int>& gpus, int gpu_count) {
  for (const int g : gpus)
    if (g >= gpu_count)
      throw InputError("GPU " + std::to_string(g) + " does not exist: the topology has " +
                       std::to_string(gpu_count) + " GPUs (0-" + std::to_string(gpu_count - 1) + ")");
}

namespace {

int machine_of(const Topology& t, int rank) { return t.device(t.gpu(rank)).node.value_or(0); }

}  // namespace

std::optional<int> sole_machine(const Topology& t, const std::vector<int>& gpus) {
  if (gpus.empty()) return std::nullopt;
  const int machine = machine_of(t, gpus.front());
  if (std::any_of(gpus.begin(), gpus.end(), [&](int g) { return machine_of(t, g) != machine; }))
    return std::nullopt;
  return machine;
}

void check_gpus_span_machines(const Topology& t, const std::vector<int>& gpus, int nodes,
                              const GpuSpanNames& names) {
  const std::optional<int> sole = sole_machine(t, gpus);
  if (nodes <= 1 || !sole) return;
  const int machine = *sole;
  std::vector<int> other;  // another machine's GPUs, for the example
  const int other_machine = machine == 0 ? 1 : 0;
  for (int r = 0; r < static_cast<int>(t.gpus().size()); ++r)
    if (machine_of(t, r) == other_machine) other.push_back(r);
  const std::string list = format_gpu_list(gpus);
  const std::string& sep = names.separator;
  throw InputError(names.gpus + sep + (names.quoted_list ? "'" + list + "'" : list) + ": all on machine " +
                   std::to_string(machine) + " of the " + names.nodes + sep + std::to_string(nodes) +
                   " machines, so the collective never leaves it and " +
                   (nodes == 2 ? "the other machine changes" : "the other machines change") +
                   " nothing; expected GPUs on two machines or more (machine " +
                   std::to_string(other_machine) + " holds GPUs " + format_gpu_list(other) + "), or " +
                   names.nodes + sep + "1");
}

}  // namespace hybridsim::topology
