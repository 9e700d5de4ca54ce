#include "analysis/output/output_folder.h"

#include <system_error>

#include "sim/error.h"

namespace hybridsim::analysis {

void check_output_folder(const std::filesystem::path& dir, const std::string& given) {
  // The deepest part that exists decides: a folder takes the rest as new folders; anything else
  // (a file, a device) cannot hold them.
  std::error_code ec;
  for (std::filesystem::path p = dir; !p.empty(); p = p.parent_path()) {
    const auto status = std::filesystem::status(p, ec);
    if (ec || !std::filesystem::exists(status)) {
      if (p == p.parent_path()) break;
      continue;
    }
    if (std::filesystem::is_directory(status)) return;
    throw InputError(given + ": " + p.string() +
                     " is a file, not a folder; expected a folder to write into (an existing one or a new "
                     "name)");
  }
}

void check_output_file(const std::filesystem::path& file, const std::string& given, const std::string& what,
                       const std::string& example) {
  if (std::filesystem::is_directory(file))
    throw InputError(given + ": is a folder; expected a file name for the " + what + " (such as " +
                     (file / example).string() + ")");
  check_output_folder(file.parent_path(), given);
}

}  // namespace hybridsim::analysis
