#include "analysis/trace/step_trace_options.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "sim/error.h"

namespace hybridsim::analysis {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

constexpr std::string_view kWindowForm =
    "expected START:END with times such as \"2 ms:5 ms\" (either side may be empty: \":5 ms\", "
    "\"2 ms:\") and START before END";
constexpr std::string_view kGpuListForm =
    "expected GPU ranks and inclusive ranges separated by commas, such as \"0-3,8,12-15\"";

std::optional<int> parse_rank(std::string_view text) {
  text = trim(text);
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < 0) return std::nullopt;
  return v;
}

}  // namespace

TraceFile trace_file(const std::filesystem::path& path, bool gzip) {
  const bool named_gz = path.filename().string().ends_with(".gz");
  if (!gzip || named_gz) return {path, gzip || named_gz};
  std::filesystem::path out = path;
  out += ".gz";
  return {out, true};
}

std::string_view trace_detail_name(TraceDetail detail) {
  switch (detail) {
    case TraceDetail::Kernels: return "kernels";
    case TraceDetail::Steps: return "steps";
    case TraceDetail::Messages: return "messages";
  }
  return "?";
}

TraceDetail parse_trace_detail(std::string_view text) {
  const std::string t = lower(trim(text));
  for (const TraceDetail d : {TraceDetail::Kernels, TraceDetail::Steps, TraceDetail::Messages})
    if (t == trace_detail_name(d)) return d;
  throw InputError("trace detail \"" + std::string(text) +
                   "\": expected kernels, steps or messages");
}

TraceWindow parse_trace_window(std::string_view text) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos || text.find(':', colon + 1) != std::string_view::npos)
    throw InputError("trace window \"" + std::string(text) + "\": " + std::string(kWindowForm));
  const std::string_view start_text = trim(text.substr(0, colon));
  const std::string_view end_text = trim(text.substr(colon + 1));
  TraceWindow w{sim::Time::zero(), sim::Time::max()};
  try {
    if (!start_text.empty()) w.start = sim::parse_time(start_text);
    if (!end_text.empty()) w.end = sim::parse_time(end_text);
  } catch (const InputError& e) {
    throw InputError("trace window \"" + std::string(text) + "\": " + e.what() + "; " +
                     std::string(kWindowForm));
  }
  if (w.start < sim::Time::zero() || !(w.start < w.end))
    throw InputError("trace window \"" + std::string(text) + "\": " + std::string(kWindowForm));
  return w;
}

std::vector<int> parse_gpu_list(std::string_view text) {
  std::vector<int> out;
  auto fail = [&]() -> std::vector<int> {
    throw InputError("GPU list \"" + std::string(text) + "\": " + std::string(kGpuListForm));
  };
  if (trim(text).empty()) fail();
  std::string_view rest = text;
  while (true) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const auto dash = item.find('-');
    const auto first = parse_rank(item.substr(0, dash));
    const auto last = dash == std::string_view::npos ? first : parse_rank(item.substr(dash + 1));
    if (!first || !last || *last < *first) fail();
    if (*last - *first > 1'000'000) fail();  // a typo, not a cluster
    for (int g = *first; g <= *last; ++g) out.push_back(g);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace hybridsim::analysis
