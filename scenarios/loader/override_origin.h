// How the caller wrote its overrides, so that their refusals quote them in the caller's language
// (issue 31): the command line's `--set cluster.nodes=x`, the Python module's `set={'cluster.nodes':
// 'x'}` or `parallelism=Parallelism(tp=0)`. The loader locates every node an override adds there.
//   OverrideOrigin py{.spelled = {"set={'nope': 1}"}};
//   py.where(0, "nope=1") == "set={'nope': 1}";  OverrideOrigin{}.where(0, "nope=1") == "--set nope=1"
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace hybridsim::scenarios {

struct OverrideOrigin {
  // Override i as the caller wrote it; past its end or empty (the command line gives none), "--set
  // <text>".
  std::vector<std::string> spelled{};
  // Where override i (whose "path=value" text is `text`) was given, echoed_override'd.
  std::string where(std::size_t i, const std::string& text) const;
};

// An override's parts: "parallelism.dp = 8" has the path "parallelism.dp" and the value "8" (trimmed;
// without '=', the whole text is the path and the value is empty).
std::string override_path(std::string_view text);
std::string override_value(std::string_view text);

// An override's text as its refusals echo it: whole while it is short, else its first 80 characters
// and its size.
std::string echoed_override(const std::string& text);

}  // namespace hybridsim::scenarios
