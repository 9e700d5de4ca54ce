#include "analysis/output/output_folder.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <system_error>

#include "sim/error.h"

namespace hybridsim::analysis {

namespace {

// Whether a new file can be made in the folder `dir`: tried, as nothing else tells (a folder of
// /proc, a read-only mount or one without write permission all look like folders; access(2) says
// yes to root for each). The probe file is removed at once. Returns the reason when not.
std::optional<std::string> cannot_write_in(const std::filesystem::path& dir) {
  const std::filesystem::path probe = dir / (".hybridsim-write-check-" + std::to_string(::getpid()));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    // A probe left by a process of this id that died: the folder takes files.
    if (errno == EEXIST) return std::nullopt;
    // /proc's folders answer "No such file or directory" for a folder that exists.
    if (errno == ENOENT) return std::string("it takes no new files");
    return std::string(std::strerror(errno));
  }
  ::close(fd);
  ::unlink(probe.c_str());
  return std::nullopt;
}

}  // namespace

void check_output_folder(const std::filesystem::path& dir, const std::string& given) {
  // The deepest part that exists decides: a folder takes the rest as new folders if it takes new
  // files at all; anything else (a file, a device) cannot hold them.
  std::error_code ec;
  std::filesystem::path p = dir.empty() ? std::filesystem::path(".") : dir;
  for (;;) {
    const auto status = std::filesystem::status(p, ec);
    if (!ec && std::filesystem::exists(status)) break;
    const std::filesystem::path parent = p.parent_path();
    if (parent == p) return;  // nothing of it exists, not even its root: the writer will say why
    p = parent.empty() ? std::filesystem::path(".") : parent;  // "new/run1": made in the working folder
  }
  if (!std::filesystem::is_directory(p, ec))
    throw InputError(given + ": " + p.string() +
                     " is a file, not a folder; expected a folder to write into (an existing one or a new "
                     "name)");
  // "--out /proc/self" ran the whole step, then said 'cannot create output file
  // "/proc/self/summary.txt": No such file or directory', naming no option.
  if (const auto why = cannot_write_in(p))
    throw InputError(given + ": cannot write in " + p.string() + " (" + *why +
                     "); expected a folder you can write into");
}

void check_output_file(const std::filesystem::path& file, const std::string& given, const std::string& what,
                       const std::string& example) {
  if (std::filesystem::is_directory(file))
    throw InputError(given + ": is a folder; expected a file name for the " + what + " (such as " +
                     (file / example).string() + ")");
  check_output_folder(file.parent_path(), given);
}

}  // namespace hybridsim::analysis
