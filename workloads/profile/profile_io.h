// Reading and writing training-step profiles in their YAML form (format hybridsim-profile/1, every key
// declared in profile_schema() and documented in workloads/README.md). Reading uses the located reader
// every YAML file shares (sim/yaml/): errors read "file:line:col: field.path: what; expected ...".
// Output is deterministic and round-trips: parse_profile(profile_to_yaml(p), ...) == p.
//   Profile p = load_profile("workloads/profiles/v100/gnmt.yaml");
//   save_profile(p, std::cout);
#pragma once
#include <iosfwd>
#include <string>
#include <string_view>

#include "sim/yaml/schema.h"
#include "workloads/profile/profile.h"

namespace hybridsim::workloads {

// A profile whose one-GPU step takes 0 s (every kernel, kept gap and optimizer update of 0 s) has no
// throughput: the loader refuses such a file at `ops` and the importers refuse to write one (they
// wrote it, exit 0, and every command then refused it). What is wrong, then what a file needs:
inline constexpr std::string_view kNoTimeStep =
    "every kernel, kept gap and optimizer update takes 0 s, so one GPU's step takes no time and its "
    "throughput (units_per_step / step time) has no value";
inline constexpr std::string_view kNoTimeStepExpected =
    "at least one kernel duration or optimizer.time_per_gib above 0 s (with a gradient to update)";

// The value of the top-level `format` key this code reads and writes.
inline constexpr std::string_view kProfileFormat = "hybridsim-profile/1";

// Parses YAML text; `source_name` (a path or "<memory>") prefixes error locations. Throws InputError.
Profile parse_profile(std::string_view yaml, const std::string& source_name);
// Reads (sim/yaml/input_file.h) and parses a file; a missing or unreadable file is an
// InputError naming the path.
Profile load_profile(const std::string& path);

// Every key of a profile file: the table behind the reader and workloads/README.md's reference.
const yaml::Schema& profile_schema();

// Writes the canonical YAML form: fixed key order, exact units (sim::format_time, sizes in "N B"),
// optional fields left out when they hold their default.
void save_profile(const Profile& profile, std::ostream& out);
std::string profile_to_yaml(const Profile& profile);

}  // namespace hybridsim::workloads
