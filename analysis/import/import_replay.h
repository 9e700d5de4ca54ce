// The check `hybridsim import` prints after turning a measured trace into a profile: the profile
// replayed on one simulated GPU against what was measured (a Kineto trace's iteration span,
// a PipeDream graph's summed layer times), with the difference in percent; and where the profile
// and that report go.
//   std::string r = kineto_replay_report(imported, /*keep_gaps=*/true);
//   emit_imported_profile(imported.profile, r, "my.yaml");
#pragma once
#include <string>

#include "workloads/import/import_kineto.h"
#include "workloads/import/import_pipedream.h"
#include "workloads/profile/profile.h"

namespace hybridsim::analysis {

// The import's own description, then "replay on one simulated GPU: ... (x.xx%; within 5%)".
std::string kineto_replay_report(const workloads::KinetoImport& imported, bool keep_gaps);
std::string pipedream_replay_report(const workloads::PipeDreamImport& imported, bool corrected);

// Writes the profile to `out` (atomically) and the report to stdout; with no `out`, the profile to
// stdout and the report to stderr.
void emit_imported_profile(const workloads::Profile& profile, const std::string& report,
                           const std::string& out);

}  // namespace hybridsim::analysis
