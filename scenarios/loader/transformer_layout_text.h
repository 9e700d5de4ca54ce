// What a transformer's "placement" and "mapping" lines say: what each GPU runs, and on which GPU
// each replica's TP ranks and pipeline stages are (resolve_pipeline.h and tensor_parallel.h place
// them so). They said the 2017 networks' words for tp 4 x dp 2, "all ops on GPU 0" and "workers on
// consecutive GPUs", and for tp 2 x pp 4 x dp 2 "stage s of TP rank r of replica q on GPU s x 4 +
// q x 2 + r" (hunt3's leftover (d)).
//   transformer_layout_text(2, 4, 1).mapping
//   // "replica q: its TP group on GPUs 4q to 4q + 3 (TP rank r on GPU 4q + r)"
#pragma once
#include <string>

namespace hybridsim::scenarios {

struct TransformerLayoutText {
  std::string placement;
  std::string mapping;
};

// dp replicas, each of pp stages of tp GPUs: stage s of replica q on the dp × tp GPUs from s·dp·tp,
// its TP rank r on GPU s·dp·tp + q·tp + r.
TransformerLayoutText transformer_layout_text(int dp, int tp, int pp);

}  // namespace hybridsim::scenarios
