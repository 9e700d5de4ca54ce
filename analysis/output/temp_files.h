// Outputs removed when the process is stopped by SIGINT, SIGTERM or SIGHUP before its command
// finished: AtomicFile's temporary files (`<target>.tmp-XXXXXX`), the files a command finished
// writing before it finished as a whole (a trace committed before its summaries), and the folders it
// made for them, removed only while empty. A command killed mid-write leaves neither a half-written
// target (an AtomicFile renames only whole files) nor its temporary file, its trace, or an empty
// trace folder. The registry is process-wide because signals are, and its slots are fixed so that the
// handler neither allocates nor locks.
//   remove_temp_files_on_signals();          // once, in the command line's main
//   const int slot = track_temp_file(path);  // AtomicFile, as it creates its temporary file
//   untrack_temp_file(slot);                 // once it is renamed into place or removed
//   track_created_folder("out/traces");      // CreatedFolders, for each folder it made
#pragma once
#include <string_view>

namespace hybridsim::analysis {

// Installs the handler for each of the three signals not already ignored (a background job's SIGINT
// stays ignored). Not called by the Python module, whose SIGINT is KeyboardInterrupt (the AtomicFile
// and CreatedFolders are then destroyed as the exception unwinds, removing what they made).
void remove_temp_files_on_signals();
// A slot to pass to untrack_temp_file, or -1 when every slot is taken or the path is too long (the
// file is then only removed as usual, not on a signal). The handler unlinks the file.
int track_temp_file(std::string_view path);
// The same for a folder, which the handler removes after the files, only while empty (rmdir), the
// deepest first. Untracked with untrack_temp_file.
int track_created_folder(std::string_view path);
void untrack_temp_file(int slot);

}  // namespace hybridsim::analysis
