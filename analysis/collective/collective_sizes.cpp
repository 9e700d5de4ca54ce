// The sizes a collective sweep runs (collective_sweep.h: collective_sizes, not_whole_floats,
// nccl_tests_count): the range and step factor checked and stepped through in whole 4 B floats as
// nccl-tests steps them, each GPU's part rounded for the ops that split the size. A file of its own:
// the sizes are settled, and refused, before any collective is planned or simulated.
#include "analysis/collective/collective_sweep.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "sim/error.h"

namespace hybridsim::analysis {

constexpr std::int64_t kElementBytes = 4;  // the float the sizes count, as nccl-tests' -d float

namespace {

std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// Ops that give each GPU a part of the size (an all-to-all: size / n to each peer; a reduce-scatter:
// size / n to each; an all-gather: size / n from each) count that part in whole floats, as nccl-tests'
// count per rank: a size is a multiple of n × 4 B, and under it a GPU has nothing. The default sweep's
// 8 B and 16 B reduce-scatters on 8 GPUs ran parts of a quarter and a half float (8.50 us rows where
// nccl-tests has none), and a 36 B all-gather parts of 4.5 B.
void round_to_whole_floats_per_gpu(const CollectiveSweepOptions& options, const std::string& max,
                                   CollectiveSizes& out) {
  const bool parts = options.op == sim::CollectiveOp::AllToAll ||
                     options.op == sim::CollectiveOp::ReduceScatter ||
                     options.op == sim::CollectiveOp::AllGather;
  if (!parts || options.gpus.empty()) return;
  std::vector<sim::Bytes>& sizes = out.sizes;
  const auto gpus = static_cast<std::int64_t>(options.gpus.size());
  const std::int64_t unit = gpus * kElementBytes;
  const std::string one_float = "one 4 B float for each of the " + std::to_string(gpus) + " GPUs of " +
                                (options.op == sim::CollectiveOp::ReduceScatter ? "a " : "an ") +
                                std::string(sim::collective_op_name(options.op)) + " (" +
                                sim::format_bytes(sim::Bytes::of(unit)) + ")";
  if (options.max_bytes.count() < unit)
    throw InputError(max + " is under " + one_float + ", less than one element to each; expected " +
                     options.names.max_bytes + " of at least " + sim::format_bytes(sim::Bytes::of(unit)));
  std::vector<sim::Bytes> kept;
  std::size_t under = 0, rounded = 0;
  for (const sim::Bytes s : sizes) {
    const sim::Bytes whole = sim::Bytes::of(s.count() / unit * unit);
    if (whole.count() == 0) {
      ++under;
      continue;
    }
    if (whole != s) ++rounded;
    if (kept.empty() || kept.back() != whole) kept.push_back(whole);  // two sizes that round alike run once
  }
  if (under > 0)
    out.note = std::to_string(under) + " size" + (under == 1 ? "" : "s") + " from " +
               sim::format_bytes(sizes.front()) + " left out, under " + one_float;
  if (rounded > 0)
    out.note += std::string(out.note.empty() ? "" : "; ") + std::to_string(rounded) + " size" +
                (rounded == 1 ? "" : "s") + " rounded down to a multiple of " +
                sim::format_bytes(sim::Bytes::of(unit)) + " (whole floats for each GPU, as nccl-tests)";
  sizes = std::move(kept);
}

}  // namespace

std::string not_whole_floats(sim::Bytes size) {
  if (size.count() % kElementBytes == 0) return {};
  const sim::Bytes below =
      sim::Bytes::of(std::max(kElementBytes, size.count() / kElementBytes * kElementBytes));
  return " is not a whole number of 4 B floats (the element it counts); expected a multiple of 4 B, "
         "such as " +
         sim::format_bytes(below);
}

CollectiveSizes collective_sizes(const CollectiveSweepOptions& options) {
  const CollectiveOptionNames& n = options.names;
  const std::string min = n.said(n.min_bytes, sim::format_bytes(options.min_bytes));
  const std::string max = n.said(n.max_bytes, sim::format_bytes(options.max_bytes));
  const std::string factor = n.said_number(n.step_factor, format_number(options.step_factor));
  if (options.min_bytes.count() <= 0) throw InputError(min + ": expected a size above 0 B");
  if (options.max_bytes < options.min_bytes)
    throw InputError(min + " is above " + max + "; expected " + n.min_bytes + " <= " + n.max_bytes);
  if (options.max_bytes > kMaxCollectiveBytes)
    throw InputError(max + " is beyond " + sim::format_bytes(kMaxCollectiveBytes) +
                     " per rank, more than any GPU holds; expected at most " +
                     sim::format_bytes(kMaxCollectiveBytes));
  if (!(options.step_factor > 1.0)) throw InputError(factor + ": expected a factor above 1");
  if (!std::isfinite(options.step_factor))
    throw InputError(factor + " gives " + sim::format_bytes(options.min_bytes) +
                     " only; expected a finite factor above 1");
  // The sizes the user gives are whole floats or refused, as the range and factor are: rounding 7 B
  // to 4 B would report a size nobody asked for. (Sizes between them, from the factor, are rounded
  // down to whole floats, as nccl-tests does.)
  const std::pair<const std::string*, sim::Bytes> given[] = {{&n.min_bytes, options.min_bytes},
                                                             {&n.max_bytes, options.max_bytes}};
  for (const auto& [option, bytes] : given)
    if (const std::string why = not_whole_floats(bytes); !why.empty())
      throw InputError(n.said(*option, sim::format_bytes(bytes)) + why);
  // The sizes, counted before any runs: a step factor barely above 1 asks for millions of rows.
  CollectiveSizes out;
  std::vector<sim::Bytes>& sizes = out.sizes;
  double size = static_cast<double>(options.min_bytes.count());
  while (size <= static_cast<double>(options.max_bytes.count()) * (1 + 1e-12)) {
    if (sizes.size() == kMaxCollectiveRows)
      throw InputError(factor + " from " + sim::format_bytes(options.min_bytes) + " to " +
                       sim::format_bytes(options.max_bytes) + " gives more than " +
                       std::to_string(kMaxCollectiveRows) +
                       " sizes; expected a larger factor or a narrower range");
    std::int64_t bytes = static_cast<std::int64_t>(std::llround(size));
    bytes = std::max<std::int64_t>(kElementBytes, bytes / kElementBytes * kElementBytes);  // as nccl-tests
    sizes.push_back(sim::Bytes::of(bytes));
    size *= options.step_factor;
  }
  // "-f 1e308" over 8 B to 256 MiB ran 8 B alone with exit 0, where "-f inf" is refused as giving
  // 8 B only: the same rule for any factor that steps past the whole range.
  if (sizes.size() == 1 && options.max_bytes > options.min_bytes)
    throw InputError(factor + " from " + sim::format_bytes(options.min_bytes) + " to " +
                     sim::format_bytes(options.max_bytes) + " gives " + sim::format_bytes(options.min_bytes) +
                     " only; expected a factor of at most " +
                     format_number(static_cast<double>(options.max_bytes.count()) /
                                   static_cast<double>(options.min_bytes.count())) +
                     ", or " + n.min_bytes + " = " + n.max_bytes + " for one size");
  round_to_whole_floats_per_gpu(options, max, out);
  return out;
}

std::int64_t nccl_tests_count(sim::CollectiveOp op, sim::Bytes size, int gpus) {
  const std::int64_t floats = size.count() / kElementBytes;
  const bool per_rank = op == sim::CollectiveOp::ReduceScatter || op == sim::CollectiveOp::AllGather ||
                        op == sim::CollectiveOp::AllToAll;
  return per_rank && gpus > 0 ? floats / gpus : floats;
}

}  // namespace hybridsim::analysis
