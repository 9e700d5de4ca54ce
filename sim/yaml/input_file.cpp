// POSIX open/fstat/read: the file is checked through the descriptor that is read, so the answer
// cannot change between the check and the read.
#include "sim/yaml/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sim/error.h"

namespace hybridsim::yaml {
namespace {

// Closes the descriptor however the read ends.
class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory";
  if (S_ISCHR(mode)) return "not a regular file (a character device)";
  if (S_ISBLK(mode)) return "not a regular file (a block device)";
  if (S_ISSOCK(mode)) return "not a regular file (a socket)";
  return "not a regular file";
}

std::string limit_text() { return std::to_string(kMaxInputFileBytes >> 20) + " MiB"; }

}  // namespace

std::string read_input_file(const std::string& path, std::string_view what) {
  const std::string name = "cannot open " + std::string(what) + " \"" + path + "\": ";
  const Descriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) throw InputError(name + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw InputError(name + std::strerror(errno));
  const bool fifo = S_ISFIFO(st.st_mode);
  if (!S_ISREG(st.st_mode) && !fifo) throw InputError(name + kind_of(st.st_mode));
  const auto too_large = [&](std::uintmax_t bytes) {
    return InputError(name + (fifo ? "more than " : "") + std::to_string(bytes) +
                      " bytes, over the limit of " + limit_text() + " for an input file");
  };
  if (!fifo && static_cast<std::uintmax_t>(st.st_size) > kMaxInputFileBytes)
    throw too_large(static_cast<std::uintmax_t>(st.st_size));
  // A regular file is read at its size (plus one byte, to see whether it grew); a FIFO in chunks.
  std::string text(fifo ? std::size_t{1} << 16 : static_cast<std::size_t>(st.st_size) + 1, '\0');
  std::size_t used = 0;
  while (true) {
    if (used == text.size()) {
      if (used > kMaxInputFileBytes) throw too_large(kMaxInputFileBytes);
      text.resize(std::min<std::size_t>(text.size() * 2, kMaxInputFileBytes + 1));
    }
    const ssize_t got = ::read(fd.get(), text.data() + used, text.size() - used);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw InputError(name + std::strerror(errno));
    if (got == 0) break;
    used += static_cast<std::size_t>(got);
  }
  if (used > kMaxInputFileBytes) throw too_large(fifo ? kMaxInputFileBytes : used);
  text.resize(used);
  return text;
}

void check_streamed_input_file(const std::string& path, std::string_view what) {
  const std::string name = "cannot open " + std::string(what) + " \"" + path + "\": ";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw InputError(name + std::strerror(errno));
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) throw InputError(name + kind_of(st.st_mode));
}

}  // namespace hybridsim::yaml
