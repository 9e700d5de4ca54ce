// Per-GPU footprints of the built-in networks at their default batch, on one GPU, split by their
// built-in placements (mp 2 and 4) and data-parallel, each derived by hand from the architecture
// (parameter counts of the reference's layer tables, outputs B × H × 4 bytes). A second, literal
// implementation of the lifetime rule (every buffer tested at every point) checks every rank's
// whole timeline, including the ranks whose peaks are not derived here.
#include <doctest/doctest.h>

#include <algorithm>

#include "workloads/generators/profile_gen.h"
#include "workloads/memory/memory_model.h"

using namespace hybridsim;
using namespace hybridsim::workloads;
using sim::Bytes;

namespace {

constexpr std::int64_t kFramework = 1'073'741'824;  // kFrameworkAllowance, 1 GiB
constexpr std::int64_t kStep = 524'288;            // one unrolled step's h: 128 × 1024 × 4 B

struct Split {
  Profile profile;
  MpPlacement placement;
  OpOrder order;
  StepMemory memory;
};

Split split(const std::string& network, int mp, int dp = 1) {
  Split s;
  s.profile = builtin_profile(network);
  s.placement =
      mp == 1 ? place_all_on_first(s.profile, 1) : partition(s.profile, mp, default_partitioner(s.profile));
  s.order = order_ops(s.profile, s.placement, sim::Bandwidth::gb_per_second(25));
  MemoryOptions o;
  o.dp = dp;
  s.memory = model_step_memory(s.profile, s.placement, s.order, o);
  return s;
}

// The lifetime rule written out literally: at point p of rank k, is each buffer alive?
std::vector<std::int64_t> literal_transient(const Split& s, int k) {
  const Profile& p = s.profile;
  const auto& fwd = s.order.forward[static_cast<std::size_t>(k)];
  const auto& bwd = s.order.backward[static_cast<std::size_t>(k)];
  const std::size_t n = p.ops.size(), opt = fwd.size() + bwd.size();
  std::vector<std::size_t> f(n, 0), b(n, 0);
  for (std::size_t i = 0; i < fwd.size(); ++i) f[fwd[i]] = i;
  for (std::size_t i = 0; i < bwd.size(); ++i) b[bwd[i]] = fwd.size() + i;
  auto here = [&](std::size_t v) { return static_cast<int>(s.placement.gpu_of_op[v]) == k; };
  std::vector<std::vector<std::size_t>> readers(n);  // the consumers of each op on this rank
  for (std::size_t v = 0; v < n; ++v)
    for (const auto in : p.ops[v].inputs)
      if (here(v)) readers[in].push_back(v);
  std::vector<std::int64_t> out(opt + 1, 0);
  for (std::size_t at = 0; at <= opt; ++at) {
    for (std::size_t u = 0; u < n; ++u) {
      const std::int64_t y = p.ops[u].activation_bytes.count();
      bool produced = false, all_read = true, first_read = false, last_done = true;
      for (const auto c : readers[u]) {
        produced = produced || b[c] <= at;
        first_read = first_read || f[c] <= at;
        last_done = last_done && b[c] < at;
        all_read = all_read && b[c] < at;
      }
      if (here(u)) {
        if (f[u] <= at && at <= b[u]) out[at] += y;                              // its output
        if ((produced || b[u] <= at) && at <= b[u]) out[at] += y;                // its gradient
      } else if (!readers[u].empty()) {
        if (first_read && !last_done) out[at] += y;                              // the received copy
        if (produced && !all_read) out[at] += y;                                 // the partial gradient
      }
    }
  }
  return out;
}

// Checks every point of every rank against the literal rule (dp 1: no gathers).
void check_literal(const Split& s) {
  for (int k = 0; k < s.placement.mp; ++k) {
    const RankMemory& r = s.memory.ranks[static_cast<std::size_t>(k)];
    const std::vector<std::int64_t> transient = literal_transient(s, k);
    REQUIRE(transient.size() == r.timeline.size());
    for (std::size_t at = 0; at < transient.size(); ++at) {
      CAPTURE(k);
      CAPTURE(at);
      // Sparse rows live from their op's backward to the end; count them as the rule says.
      std::int64_t sparse = 0;
      for (std::size_t u = 0; u < s.profile.ops.size(); ++u) {
        const Op& op = s.profile.ops[u];
        if (static_cast<int>(s.placement.gpu_of_op[u]) != k ||
            op.exchange != GradientExchange::SparseAllGather)
          continue;
        const auto& bwd = s.order.backward[static_cast<std::size_t>(k)];
        const std::size_t pos = s.order.forward[static_cast<std::size_t>(k)].size() +
                                static_cast<std::size_t>(std::find(bwd.begin(), bwd.end(), u) - bwd.begin());
        if (pos <= at) sparse += op.sparse_bytes_per_worker.count();
      }
      CHECK(r.timeline[at].live.count() - r.after_step.count() == transient[at] + sparse);
    }
  }
}

std::int64_t total(const Split& s, int k) {
  return s.memory.ranks[static_cast<std::size_t>(k)].peak.total().count();
}
std::int64_t part(const Split& s, int k, MemoryPart p) {
  return s.memory.ranks[static_cast<std::size_t>(k)].peak[p].count();
}

}  // namespace

TEST_CASE("memory, built-in: Inception-V3 on one GPU and split by branches") {
  // 27,161,264 parameters × 4 B = 108,645,056 B of weights, as much again of gradients and of SGD's
  // momentum. Activations peak during the backward of Mixed_7c.branch1x1, the 8th backward op: all
  // outputs of the step (the profile's 124 ops; 64 × C × H × W × 4 B each), less those already
  // freed — AuxLogits.fc and head.fc (64 × 1000 × 4 = 256,000 each), AuxLogits.conv1 (64 × 768 × 4
  // = 196,608), head.avgpool (64 × 2048 × 4 = 524,288), AuxLogits.conv0 (64 × 128 × 5 × 5 × 4 =
  // 819,200), Mixed_7c.concat (64 × 2048 × 8 × 8 × 4 = 33,554,432), AuxLogits.avgpool (64 × 768 ×
  // 5 × 5 × 4 = 4,915,200): 40,521,728 — plus the gradients pending: Mixed_7c's six branch outputs
  // (branch1x1 64 × 320 × 64 × 4 = 5,242,880; four 64 × 384 × 64 × 4 = 6,291,456; branch_pool 64 ×
  // 192 × 64 × 4 = 3,145,728), Mixed_6e.concat's (64 × 768 × 17 × 17 × 4 = 56,819,712, from
  // AuxLogits.avgpool) and Mixed_7b.concat's (33,554,432, made now): 123,928,576.
  const Split one = split("inception-v3", 1);
  std::int64_t outputs = 0;
  for (const Op& op : one.profile.ops) outputs += op.activation_bytes.count();
  CHECK(part(one, 0, MemoryPart::Weights) == 108'645'056);
  CHECK(part(one, 0, MemoryPart::Gradients) == 108'645'056);
  CHECK(part(one, 0, MemoryPart::OptimizerState) == 108'645'056);
  CHECK(part(one, 0, MemoryPart::Activations) == outputs - 40'521'728 + 123'928'576);
  CHECK(part(one, 0, MemoryPart::Activations) == 3'713'171'456);
  CHECK(total(one, 0) == 3 * 108'645'056 + 3'713'171'456 + kFramework);  // 4.76 GiB
  check_literal(one);
  // Split by branches: each GPU keeps the parameters of its ops (SGD: weights = gradients = momentum),
  // all of them once over the worker; activations follow the rule (checked literally).
  for (const int mp : {2, 4}) {
    const Split s = split("inception-v3", mp);
    std::int64_t weights = 0;
    for (int k = 0; k < mp; ++k) {
      CAPTURE(mp);
      CAPTURE(k);
      const std::int64_t w = part(s, k, MemoryPart::Weights);
      weights += w;
      CHECK(part(s, k, MemoryPart::OptimizerState) == w);
      CHECK(total(s, k) == 3 * w + part(s, k, MemoryPart::Activations) + kFramework);
    }
    CHECK(weights == 108'645'056);
    check_literal(s);
  }
  // The branch split shrinks the largest GPU's activations from 3.46 GiB to 2.28 (mp 2), 2.67 (mp 4):
  // towers spread over GPUs, but each GPU keeps the copies of the block inputs it receives.
  CHECK(part(split("inception-v3", 2), 0, MemoryPart::Activations) == 2'451'542'016);
  CHECK(part(split("inception-v3", 4), 0, MemoryPart::Activations) == 2'866'294'784);
}

TEST_CASE("memory, built-in: GNMT on one GPU and split by stacks") {
  // 160,671,297 parameters × 4 B = 642,685,188 B; Adam keeps two FP32 moments: 1,285,370,376 B.
  // Outputs: embedding 128 × 48 × 1024 × 4 = 25,165,824, attention.keys (keys and values) as much,
  // 240 unrolled steps of 524,288, the classifier's logits 128 × 24 × 32,320 × 4 = 397,148,160:
  // 573,308,928 B. The peak is the classifier's backward: + its gradient 397,148,160 + those of its
  // 24 inputs dec.L3.t* 24 × 524,288 = 12,582,912 → 983,040,000 B.
  const Split one = split("gnmt", 1);
  CHECK(part(one, 0, MemoryPart::Weights) == 642'685'188);
  CHECK(part(one, 0, MemoryPart::OptimizerState) == 1'285'370'376);
  CHECK(part(one, 0, MemoryPart::Activations) == 573'308'928 + 397'148'160 + 12'582'912);
  CHECK(total(one, 0) == std::int64_t{4} * 642'685'188 + 983'040'000 + kFramework);  // 4.31 GiB
  check_literal(one);

  // mp 2. GPU 0: embedding 132,382,720, enc.L0 (fw + bw) 67,174,400, enc.L1 50,364,416, dec.L0
  // 33,587,200, attention (keys 4,194,304, steps 4,202,500), dec.L1 50,364,416 = 342,269,956 B.
  // Peak at dec.L0.t23's backward: its outputs (embedding, keys 25,165,824 each, 120 steps of
  // enc.L0 fw/bw, enc.L1, dec.L0, dec.L1 and 24 of attention: 144 × 524,288) + the received enc.L3
  // steps (24 × 524,288) = 138,412,032; dec.L1.t23 and attention.t23 have run their backward (their
  // outputs freed, −2 steps); gradients pending: dec.L0.t23, dec.L1.t22, dec.L0.t22 (3 steps),
  // keys' and the embedding's (2 × 25,165,824) → 138,412,032 − 1,048,576 + 1,572,864 + 50,331,648.
  const Split two = split("gnmt", 2);
  CHECK(part(two, 0, MemoryPart::Weights) == 342'269'956);
  CHECK(part(two, 0, MemoryPart::Activations) == 138'412'032 - 1'048'576 + 1'572'864 + 50'331'648);
  CHECK(total(two, 0) == 4 * 342'269'956 + 189'267'968 + kFramework);
  // GPU 1: enc.L2, enc.L3 (2 × 33,587,200), dec.L2, dec.L3 (2 × 50,364,416), classifier 132,512,000
  // = 300,415,232 B. Peak at the classifier's backward: received enc.L1, dec.L1 and attention steps
  // (72 × 524,288 = 37,748,736), its own 96 steps (50,331,648), the logits and their gradient
  // (2 × 397,148,160), dec.L3's 24 gradients (12,582,912) = 894,959,616 B.
  CHECK(part(two, 1, MemoryPart::Weights) == 300'415'232);
  CHECK(part(two, 1, MemoryPart::Activations) == 72 * kStep + 96 * kStep + 2 * 397'148'160 + 24 * kStep);
  CHECK(total(two, 1) == 4 * 300'415'232 + 894'959'616 + kFramework);  // 2.95 GiB, the larger
  check_literal(two);

  // mp 4: one layer of each stack per GPU. GPU 0: embedding, enc.L0, dec.L0, attention = 241,541,124 B;
  // GPU 1: enc.L1 + dec.L1 = 100,728,832; GPU 2: enc.L2 + dec.L2 = 83,951,616; GPU 3: enc.L3 + dec.L3
  // + classifier = 216,463,616.
  const Split four = split("gnmt", 4);
  CHECK(part(four, 0, MemoryPart::Weights) == 241'541'124);
  CHECK(part(four, 1, MemoryPart::Weights) == 100'728'832);
  CHECK(part(four, 2, MemoryPart::Weights) == 83'951'616);
  CHECK(part(four, 3, MemoryPart::Weights) == 216'463'616);
  // GPU 0 at dec.L0.t23's backward: own outputs (embedding, keys, 72 steps of enc.L0 fw/bw and dec.L0,
  // 24 of attention = 50,331,648 + 96 steps) + 24 received enc.L3 steps; attention.t23's output
  // freed; gradients of dec.L0.t23, dec.L0.t22, keys and embedding.
  CHECK(part(four, 0, MemoryPart::Activations) ==
        50'331'648 + 96 * kStep + 24 * kStep - kStep + 2 * kStep + 2 * 25'165'824);
  // GPUs 1 and 2 at dec.L1.t23's / dec.L2.t23's backward: received steps (GPU 1: enc.L0 fw and bw,
  // dec.L0, attention: 96; GPU 2: enc.L1, dec.L1, attention: 72), own 48, and 4 step gradients (its
  // own, its predecessor's, the partial ones of the two remote inputs).
  CHECK(part(four, 1, MemoryPart::Activations) == (96 + 48 + 4) * kStep);
  CHECK(part(four, 2, MemoryPart::Activations) == (72 + 48 + 4) * kStep);
  // GPU 3 at the classifier's backward: 72 received steps, its own 48, logits and their gradient,
  // dec.L3's 24 gradients.
  CHECK(part(four, 3, MemoryPart::Activations) == (72 + 48 + 24) * kStep + 2 * 397'148'160);
  for (int k = 0; k < 4; ++k)
    CHECK(total(four, k) ==
          4 * part(four, k, MemoryPart::Weights) + part(four, k, MemoryPart::Activations) + kFramework);
  check_literal(four);
}

TEST_CASE("memory, built-in: BigLSTM on one GPU and split by layers") {
  // 1,776,880,510 parameters × 4 B = 7,107,522,040 B (embedding 3,250,053,120, softmax 3,253,227,000,
  // two LSTMP layers 302,120,960 each); Adagrad's accumulators as much. Dense gradients: the two
  // LSTM layers, 604,241,920 B; the tables' gradients are their touched rows, from their backward
  // on. Outputs: embedding 128 × 20 × 1024 × 4 = 10,485,760, 40 steps of 524,288, the sampled
  // logits 128 × 20 × 8,193 × 4 = 83,896,320: 115,353,600. Peak at the softmax's backward (the first):
  // + its gradient 83,896,320 + lstm_1's 20 step gradients 10,485,760 = 209,735,680, and the
  // softmax's rows 10,752 × 4,116 B = 44,255,232.
  const Split one = split("biglstm", 1);
  CHECK(part(one, 0, MemoryPart::Weights) == 7'107'522'040);
  CHECK(part(one, 0, MemoryPart::OptimizerState) == 7'107'522'040);
  CHECK(part(one, 0, MemoryPart::Gradients) == 604'241'920 + 44'255'232);
  CHECK(part(one, 0, MemoryPart::Activations) == 115'353'600 + 83'896'320 + 10'485'760);
  CHECK(total(one, 0) == 2 * 7'107'522'040 + 604'241'920 + 44'255'232 + 209'735'680 + kFramework);
  CHECK(total(one, 0) == 16'147'018'736);  // 15.0 GiB: fits a 16 GiB V100, 1.0 GiB to spare
  check_literal(one);

  // mp 2: embedding + lstm_0 | lstm_1 + softmax. GPU 0 peaks at lstm_0.t19's backward (its first):
  // embedding output 10,485,760 + 20 steps + the gradients of lstm_0.t19 (received), lstm_0.t18 and
  // the embedding (lstm_0.t19 is its first reader's backward) = 32,505,856; dense gradient lstm_0.
  const Split two = split("biglstm", 2);
  CHECK(part(two, 0, MemoryPart::Activations) == 10'485'760 + 20 * kStep + 2 * kStep + 10'485'760);
  CHECK(total(two, 0) == 2 * (3'250'053'120 + 302'120'960) + 302'120'960 + 32'505'856 + kFramework);
  // GPU 1 peaks at the softmax's backward: received lstm_0 steps, its own lstm_1 steps, logits and
  // their gradient, lstm_1's gradients = 3 × 10,485,760 + 2 × 83,896,320; gradients lstm_1 and the
  // softmax's rows.
  CHECK(part(two, 1, MemoryPart::Activations) == 3 * 10'485'760 + 2 * 83'896'320);
  CHECK(total(two, 1) ==
        2 * (302'120'960 + 3'253'227'000) + 302'120'960 + 44'255'232 + 199'249'920 + kFramework);
  check_literal(two);

  // mp 4: one layer per GPU. The embedding's GPU: its output and the gradient it gets back, its rows.
  const Split four = split("biglstm", 4);
  CHECK(total(four, 0) == 2 * 3'250'053'120 + 10'506'240 + 2 * 10'485'760 + kFramework);
  // lstm_0's: the received embedding output, its 20 steps, the gradients of t19 (received), t18 and
  // the embedding's partial one.
  CHECK(total(four, 1) == 3 * 302'120'960 + 10'485'760 + 20 * kStep + 2 * kStep + 10'485'760 + kFramework);
  // lstm_1's: 20 received steps, 20 own, the gradients of t19 (received), t18 and lstm_0.t19 (partial).
  CHECK(total(four, 2) == 3 * 302'120'960 + 40 * kStep + 3 * kStep + kFramework);
  // The softmax's: 20 received steps, logits and their gradient, the 20 partial step gradients.
  CHECK(total(four, 3) == 2 * 3'253'227'000 + 44'255'232 + 40 * kStep + 2 * 83'896'320 + kFramework);
  check_literal(four);
}

TEST_CASE("memory, built-in: data parallelism adds buckets, NCCL buffers and BigLSTM's gathered rows") {
  // dp 8 with NCCL's auto algorithm: 6 channels × 4 connections × 9,633,792 B = 231,211,008 B of
  // NCCL buffers, DDP's flat copy of every dense gradient.
  constexpr std::int64_t nccl = 231'211'008;
  // GNMT: 4,627,522,576 B on one GPU (above) + buckets 642,685,188 + NCCL = 5.12 GiB.
  CHECK(total(split("gnmt", 1, 8), 0) == 4'627'522'576 + 642'685'188 + nccl);
  // BigLSTM peaks at the optimizer: persistent weights, Adagrad, dense gradients and their bucket
  // copies (2 × 7,107,522,040 + 2 × 604,241,920), NCCL, the framework; then the tables' rows
  // (10,506,240 + 44,255,232 = 54,761,472), their flat input copies (as much), every worker's rows
  // gathered (8 × 54,761,472 = 438,091,776) and copied out of the gather's flat buffer (as much):
  // 17,714,187,248 B = 16.5 GiB, more than a 16 GiB V100 holds.
  const Split dp8 = split("biglstm", 1, 8);
  CHECK(total(dp8, 0) ==
        2 * 7'107'522'040 + 2 * 604'241'920 + nccl + kFramework + 2 * 54'761'472 + 2 * 438'091'776);
  CHECK(dp8.memory.ranks[0].timeline[dp8.memory.ranks[0].peak_point].phase == MemoryPhase::Optimizer);
  CHECK_FALSE(fits_in(dp8.memory.peaks(), Bytes::gib(16)));
  CHECK(fits_in(dp8.memory.peaks(), Bytes::gib(32)));
  // Hybrid 8 × 2: the softmax's GPU gathers 8 × 44,255,232 B of rows: 9.14 GiB, it fits.
  CHECK(fits_in(split("biglstm", 2, 8).memory.peaks(), Bytes::gib(16)));
}
