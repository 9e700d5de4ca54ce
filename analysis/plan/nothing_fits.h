// plan's refusal where no candidate fits in memory, in one wording for the 2017 networks'
// configurations and a transformer's layouts: they said it two ways ("--memory: none of the 592
// layouts ...; the least, ..., needs ...; expected a larger --memory or more --gpus" against "none of
// the 23 configurations ...; the first, ...: does not fit: GPU 0 needs ...; expected a larger
// --memory or more GPUs (...)": hunt3's leftover (b)).
//   nothing_fits_text({.lead = "--memory", .count = 23, .kind = "configurations", .what = "gnmt on 8 GPUs",
//                      .capacity = "1 GiB (--memory 1 GiB)", .least = "8 x 1, ...", .needs = "4.96 GiB on
//                      GPU 0 (...)", .expected = "a larger --memory or more --gpus"})
//   // "--memory: none of the 23 configurations of gnmt on 8 GPUs fits in 1 GiB (--memory 1 GiB); the
//   //  least, 8 x 1, ..., needs 4.96 GiB on GPU 0 (...); expected a larger --memory or more --gpus"
#pragma once
#include <cstddef>
#include <string>

namespace hybridsim::analysis {

struct NothingFits {
  std::string lead;  // the option that set the capacity, as the user wrote it ("--memory"); else empty
  std::size_t count = 0;
  std::string kind;      // "configurations", "layouts"
  std::string what;      // "gnmt on 8 GPUs"
  std::string capacity;  // "1 GiB (--memory 1 GiB)"
  std::string least;     // the label of the candidate that needs the least memory
  std::string needs;     // what it needs: "4.96 GiB on GPU 0 (weights 0.60, ...)"
  std::string expected;  // "a larger --memory or more --gpus"
  std::string aside;     // after it: "--show-unfit ranks them anyway", "not searched: ep"; may be empty
};

std::string nothing_fits_text(const NothingFits& n);

}  // namespace hybridsim::analysis
