// The one grammar of GPU lists: global GPU ranks and inclusive ranges separated by commas,
// "0-3,8,12-15" → {0, 1, 2, 3, 8, 12, 13, 14, 15}, sorted; a bare number is that one GPU. A GPU
// listed twice ("0-3,2-5", "3,3") is refused: a typo, or a collective of fewer GPUs than it says.
// Trace filters, the scenario's outputs.trace.gpus and `collective --gpus` use it.
//   parse_gpu_list("0-3,8") == std::vector<int>{0, 1, 2, 3, 8}
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hybridsim::topology {

class Topology;

// What a GPU list must look like, for error messages.
inline constexpr std::string_view kGpuListForm =
    "GPU ranks and inclusive ranges separated by commas, such as \"0-3,8,12-15\"";
// The largest rank a list may name (a typo, not a cluster, beyond it).
inline constexpr int kMaxListedGpu = 1 << 20;

// nullopt when the text is not of that form (empty, a backwards range, a rank above kMaxListedGpu,
// a GPU listed twice).
std::optional<std::vector<int>> try_parse_gpu_list(std::string_view text);
// Why a text is not of that form, where it can say, and what to write instead where that is not
// the form itself (empty: the caller's words for the form): {"GPU 2 is listed twice", "each GPU
// once"}, {"the range 7-0's first GPU is after its last: write 0-7", ""}; nullopt when
// the text is a list, or is wrong in a way the form itself says (a letter, an empty item).
struct GpuListProblem {
  std::string why, expected;
};
std::optional<GpuListProblem> gpu_list_problem(std::string_view text);
// Throws InputError "GPU list "x": expected ..." instead (with the problem's why where there is one).
std::vector<int> parse_gpu_list(std::string_view text);
// The shortest text of that grammar for a sorted list: {0, 1, 2, 3, 8} → "0-3,8".
std::string format_gpu_list(const std::vector<int>& gpus);
// Throws InputError when a listed GPU is not one of the topology's `gpu_count` GPUs.
void check_gpus_exist(const std::vector<int>& gpus, int gpu_count);
// The machine every GPU of `gpus` is on, when they are all on one; nullopt when they span several
// (or the list is empty).
std::optional<int> sole_machine(const Topology& t, const std::vector<int>& gpus);
// How a refusal names the GPU list and the machine count, as the caller gave them: "--gpus 0-3" and
// "--nodes 2" on the command line, "gpus='0-3'" and "nodes=2" in Python, "collective.gpus 0-3" in a
// validate case.
struct GpuSpanNames {
  std::string gpus = "--gpus", nodes = "--nodes";
  std::string separator = " ";  // between a name and its value: "=" in Python
  bool quoted_list = false;     // the list as a Python str: '0-3'
};
// Throws InputError when `nodes` > 1 machines were asked for and every GPU of `gpus` is on one of
// them: a collective among them never leaves that machine, so the others and the network between
// them would change nothing.
void check_gpus_span_machines(const Topology& t, const std::vector<int>& gpus, int nodes,
                              const GpuSpanNames& names = {});

}  // namespace hybridsim::topology
