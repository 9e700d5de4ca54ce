// Statistical efficiency: how many epochs training needs to reach its quality target as a function of
// the GLOBAL batch size B (samples per optimizer step, summed over all data-parallel workers).
// Either a table of measured (B, epochs) points interpolated in log-log space, or the parametric form
// epochs(B) = E_min·(1 + B/B_noise) of McCandlish et al. 2018; values outside the supported range
// are still returned but flagged as extrapolated.
//   auto gnmt = StatisticalEfficiency::parametric(3.15, 9'057, {2'048, 16'384});
//   EpochsEstimate e = gnmt.epochs(8'192);   // e.epochs ≈ 6.0, e.extrapolated == false
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hybridsim::analysis {

// Epochs to reach the target at one global batch, and whether the batch lies outside the range the
// curve was measured or fitted on (then the value is an extrapolation, not evidence).
struct EpochsEstimate {
  double epochs = 0;
  bool extrapolated = false;
};

// One measured point: at this global batch (samples), training needed this many epochs.
struct BatchEpochs {
  std::int64_t global_batch = 0;
  double epochs = 0;
};

// Inclusive range of global batch sizes (samples) a curve is supported on.
struct BatchRange {
  std::int64_t min = 0;
  std::int64_t max = 0;
  bool contains(std::int64_t b) const { return b >= min && b <= max; }
};

class StatisticalEfficiency {
 public:
  enum class Kind { table, parametric };

  // At least two points with strictly increasing batches > 0 and epochs > 0 (else InputError). The
  // supported range is [first batch, last batch]; outside it the end segment's log-log slope is
  // extended and the estimate is flagged.
  static StatisticalEfficiency table(std::vector<BatchEpochs> points);
  // The same points supported on another range (training.efficiency's min_batch, max_batch): a batch
  // outside it is flagged, a point of the table too; 1 <= supported.min <= supported.max.
  static StatisticalEfficiency table(std::vector<BatchEpochs> points, BatchRange supported);
  // epochs(B) = e_min·(1 + B/b_noise); e_min > 0, b_noise > 0, 1 <= supported.min <= supported.max.
  static StatisticalEfficiency parametric(double e_min, double b_noise, BatchRange supported);
  // The parametric curve above supported.min, joined below it to a measured point under the fitted
  // range (anchor.global_batch < supported.min): log-log linear from the anchor to the fit's value
  // at supported.min, and the anchor's epochs held below the anchor (flagged extrapolated: nothing
  // measured there says which way epochs go). The supported range then starts at the anchor.
  static StatisticalEfficiency anchored(double e_min, double b_noise, BatchRange supported,
                                        BatchEpochs anchor);

  // Epochs to the target at global batch B > 0 (InputError otherwise). Table points are reproduced
  // exactly; between points, log(epochs) is linear in log(B).
  EpochsEstimate epochs(std::int64_t global_batch) const;

  Kind kind() const { return kind_; }
  BatchRange supported() const { return supported_; }
  const std::vector<BatchEpochs>& points() const { return points_; }  // empty when parametric
  double e_min() const { return e_min_; }                             // 0 when a table
  double b_noise() const { return b_noise_; }                         // 0 when a table
  const std::optional<BatchEpochs>& anchor() const { return anchor_; }  // the anchored curve's point

 private:
  StatisticalEfficiency() = default;
  EpochsEstimate table_epochs(std::int64_t global_batch) const;

  Kind kind_ = Kind::parametric;
  std::vector<BatchEpochs> points_;
  double e_min_ = 0;
  double b_noise_ = 0;
  std::optional<BatchEpochs> anchor_;
  std::int64_t fitted_min_ = 0;  // anchored: where the fit takes over from the join
  BatchRange supported_;
};

// A built-in curve for one network with its provenance. `variant` is "default", "optimistic",
// "pessimistic" or a network-specific extra ("measured", "lars_v06"); the three common names exist
// for every network so that a study can show the sensitivity of time to train to the curve.
struct EfficiencyCurve {
  std::string network;  // "gnmt", "inception-v3", "biglstm" (workloads::canonical_network_name)
  std::string variant;
  std::string source;        // where the numbers come from, one or two sentences
  bool is_estimate = false;  // true where no measurement backs the curve (BigLSTM)
  StatisticalEfficiency efficiency;
};

// The training set of a network, counted in the samples its global batch is counted in.
struct TrainingDataset {
  std::string network;
  std::string name;          // "ImageNet-1k"
  std::string sample;        // what one sample is: "image", "sentence pair", "sequence of 20 words"
  std::int64_t samples = 0;  // samples per epoch
  std::string source;
};

// Every built-in curve, in a fixed order (network, then default/optimistic/pessimistic/extras).
std::vector<EfficiencyCurve> builtin_efficiency_curves();
std::optional<EfficiencyCurve> find_efficiency_curve(std::string_view network, std::string_view variant);
// As find_efficiency_curve, but throws InputError listing the known networks and variants.
EfficiencyCurve efficiency_curve_by_name(std::string_view network, std::string_view variant);

std::vector<TrainingDataset> builtin_training_datasets();
std::optional<TrainingDataset> find_training_dataset(std::string_view network);
TrainingDataset training_dataset_by_name(std::string_view network);

// A built-in curve counts epochs of its own network's dataset in that network's samples (WMT sentence
// pairs, ImageNet images, 1B-word sequences of 20): on a transformer, whose samples are its sequences,
// it gives a time to train of nothing, and a transformer's name as a 2017 network's curve the reverse.
// What is wrong when `curve_network` (training.network, a study's efficiency) is of another family
// than `workload_network` (the profile's network), in the two parts a located refusal writes as
// "problem; expected ..." at the key; nullopt when the two are of one family. Run, sweep, study and
// the Python module all ask this one function.
struct CurveFamilyMismatch {
  std::string problem;
  std::string expected;
};
std::optional<CurveFamilyMismatch> curve_family_mismatch(std::string_view workload_network,
                                                         std::string_view curve_network);

}  // namespace hybridsim::analysis
