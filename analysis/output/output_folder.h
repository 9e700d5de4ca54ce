// An output folder checked before any work (issue 31: a study of minutes ran every step, then said
// "cannot create the report folder f: Not a directory"): a path that names a file, or runs through
// one, or a folder that takes no new files (/proc/self, a read-only mount), is refused naming where
// it was given.
//   check_output_folder("results/run1", "--out results/run1");  // fine: existing or new folders
//   check_output_folder("notes.txt", "--out notes.txt");        // InputError: a file, not a folder
//   check_output_folder("/proc/self", "--out /proc/self");      // InputError: cannot write in it
#pragma once
#include <filesystem>
#include <string>

namespace hybridsim::analysis {

// `given`: how the folder was named, for the refusal ("--out f", Python's "out='f'", a scenario's
// "s.yaml:9:14: outputs.directory f").
void check_output_folder(const std::filesystem::path& dir, const std::string& given);
// An output file (a trace, a Graphviz file) checked the same way: not a folder, and its folder one
// that is or can be made. `example` names a file for the refusal's suggestion ("trace.json").
//   check_output_file("dir", "--dot dir", "topology.dot");  // InputError: a folder; such as dir/topology.dot
void check_output_file(const std::filesystem::path& file, const std::string& given, const std::string& what,
                       const std::string& example);

}  // namespace hybridsim::analysis
