// The worker-independent part of a pipeline's step (pipeline_layout.h) and the chunks of its ops
// (pipeline_program.h: pipeline_chunk_of_op, pipeline_layer_count).
#include "workloads/program/pipeline_layout.h"

#include <algorithm>
#include <string>

#include "sim/error.h"
#include "workloads/gpu/gpu.h"
#include "workloads/program/pipeline_program.h"

namespace hybridsim::workloads {

namespace {

// The op that opens transformer layer N, "layer.N": not a part of it such as a mixture's
// "layer.N.experts" (its second op), which stays in its layer's chunk. Counting those too split a
// mixture's layers by ops: pipeline.stages [1, 3] over Mixtral's 4 layers was refused as "the model
// has 8", [2, 6] ran 1 and 3 layers while memory counted 2 and 6, and 3 layers over pp 2 cut layer 1
// between the stages (memory: 1 and 2 layers).
bool opens_a_layer(const Op& op) {
  constexpr std::string_view kPrefix = "layer.";
  return op.name.starts_with(kPrefix) && op.name.find('.', kPrefix.size()) == std::string::npos;
}

}  // namespace

int pipeline_layer_count(const Profile& profile) {
  const auto n = std::count_if(profile.ops.begin(), profile.ops.end(), opens_a_layer);
  return n == 0 ? static_cast<int>(profile.ops.size()) : static_cast<int>(n);
}

std::vector<int> pipeline_chunk_of_op(const Profile& profile, const PipelineOptions& options) {
  for (std::size_t v = 0; v < profile.ops.size(); ++v) {
    const auto& in = profile.ops[v].inputs;
    if (in.size() > 1 || (v == 0 && !in.empty()) || (v > 0 && (in.size() != 1 || in[0] != v - 1)))
      throw InputError("pipeline parallelism needs a chain of layers (a transformer); " +
                       profile.meta.network + "'s op " + profile.ops[v].name + " is not one");
  }
  const int layers = pipeline_layer_count(profile);
  if (const auto problem = pipeline_problem(options, layers, options.pp))
    throw InputError(problem->key + ": " + problem->what);
  const int chunks = options.pp * options.virtual_stages;
  const std::vector<int> sizes =
      options.chunk_layers.empty() ? balanced_layers(layers, chunks) : options.chunk_layers;
  const bool named = layers != static_cast<int>(profile.ops.size()) ||
                     (!profile.ops.empty() && opens_a_layer(profile.ops[0]));
  std::vector<int> out(profile.ops.size(), 0);
  int chunk = 0, left = sizes[0], seen = 0;
  for (std::size_t v = 0; v < profile.ops.size(); ++v) {
    const bool layer = !named || opens_a_layer(profile.ops[v]);
    if (layer && left == 0) left = sizes[static_cast<std::size_t>(++chunk)];
    out[v] = chunk;
    if (layer) {
      --left;
      ++seen;
    }
  }
  if (seen != layers) throw InternalError("pipeline: layers miscounted");
  return out;
}

namespace pipeline_parts {

namespace {

using step_parts::GradientCollective;

// Kernel labels: micro-batch j's copy of every op's forward and backward kernels, then the optimizer.
step_parts::KernelLabels pipeline_labels(const Profile& profile, int m, std::uint32_t& stride) {
  const step_parts::KernelLabels one = step_parts::label_kernels(profile);
  stride = one.optimizer;
  step_parts::KernelLabels out;
  out.first_of_op = one.first_of_op;
  for (int j = 0; j < m; ++j)
    for (std::uint32_t i = 0; i < stride; ++i) {
      out.labels.push_back(one.labels[i]);
      out.labels.back().micro_batch = j;
    }
  out.optimizer = static_cast<std::uint32_t>(out.labels.size());
  out.labels.push_back(one.labels[one.optimizer]);
  return out;
}

// Stage s's gradient collectives: its chunks in the order of their last backward, each chunk's
// ops last to first (backward order), packed into buckets as data parallelism does.
void lay_out_gradients(const Profile& profile, const StepOptions& options, int dp, Layout& l) {
  const auto p = static_cast<std::size_t>(l.x.p);
  l.gradients.resize(p);
  l.gradients_after.assign(p, std::vector<std::vector<std::size_t>>(profile.ops.size()));
  if (dp <= 1) return;
  for (std::size_t s = 0; s < p; ++s) {
    std::vector<int> chunks(static_cast<std::size_t>(l.x.v));
    for (int c = 0; c < l.x.v; ++c) chunks[static_cast<std::size_t>(c)] = c;
    std::sort(chunks.begin(), chunks.end(),
              [&](int a, int b) { return l.last_backward[s][static_cast<std::size_t>(a)] <
                                         l.last_backward[s][static_cast<std::size_t>(b)]; });
    std::vector<std::uint32_t> order;
    for (const int c : chunks) {
      const auto& ops = l.ops_of_chunk[static_cast<std::size_t>(c) * p + s];
      order.insert(order.end(), ops.rbegin(), ops.rend());
    }
    l.gradients[s] = step_parts::gradient_collectives(profile, order, options);
    for (std::size_t i = 0; i < l.gradients[s].size(); ++i)
      l.gradients_after[s][l.gradients[s][i].trigger].push_back(i);
  }
}

}  // namespace

Layout lay_out(const Profile& profile, const StepOptions& options, int dp) {
  const PipelineOptions& o = options.pipeline;
  Layout l;
  l.x = {o.pp, o.virtual_stages, options.accumulation};
  l.chunks = o.pp * o.virtual_stages;
  if (const auto problem = pipeline_problem(o, pipeline_layer_count(profile), l.x.m))
    throw InputError(problem->key + ": " + problem->what);
  const std::vector<int> chunk_of_op = pipeline_chunk_of_op(profile, o);
  l.ops_of_chunk.resize(static_cast<std::size_t>(l.chunks));
  MpPlacement stages{o.pp, {}, "pipeline stages"};
  for (std::uint32_t v = 0; v < profile.ops.size(); ++v) {
    l.ops_of_chunk[static_cast<std::size_t>(chunk_of_op[v])].push_back(v);
    stages.gpu_of_op.push_back(static_cast<std::uint32_t>(chunk_of_op[v] % o.pp));
  }
  for (int s = 0; s < o.pp; ++s) {
    l.schedule.push_back(stage_schedule(o.schedule, l.x, s));
    std::vector<std::size_t> last(static_cast<std::size_t>(l.x.v), 0);
    for (std::size_t i = 0; i < l.schedule.back().size(); ++i)
      if (l.schedule.back()[i].backward) last[static_cast<std::size_t>(l.schedule.back()[i].chunk)] = i;
    l.last_backward.push_back(std::move(last));
  }
  l.labels = pipeline_labels(profile, l.x.m, l.stride);
  lay_out_gradients(profile, options, dp, l);
  l.optimizer = step_parts::optimizer_times(profile, stages, dp);
  const Gpu* gpu = find_gpu(profile.meta.gpu);
  std::vector<std::uint32_t> first;
  std::uint32_t next = 0, event = static_cast<std::uint32_t>((l.chunks - 1) * l.x.m * Kinds);
  for (const auto& g : l.gradients) {
    first.push_back(next);
    next += static_cast<std::uint32_t>(g.size());
    l.first_gradient_event.push_back(event);
    event += static_cast<std::uint32_t>(g.size()) + 1;  // each collective's readiness, all done
  }
  for (int s = 0; s < o.pp; ++s, event += 2) l.sends_done_event.push_back(event);
  l.events_per_worker = event;
  l.after_flush = dp > std::max(1, options.tp);
  if (dp > 1 && options.gradient_copies && gpu && !profile.has_recorded_buckets())
    l.copies = step_parts::gradient_copies(l.gradients, first, dp, *gpu, l.labels, options.copy_passes);
  return l;
}

}  // namespace pipeline_parts

}  // namespace hybridsim::workloads
