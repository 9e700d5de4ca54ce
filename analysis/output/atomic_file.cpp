// AtomicFile: temporary file + rename, so that an interrupted or failed run never leaves a truncated
// output behind (a killed process may leave a `.tmp-` file, never a partial target).
#include "analysis/output/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <random>
#include <system_error>

#include "analysis/output/temp_files.h"
#include "sim/error.h"

namespace hybridsim::analysis {

namespace {

constexpr std::size_t kBufferBytes = 64 * 1024;

std::string random_suffix(std::mt19937_64& rng) {
  constexpr std::string_view kAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string s(6, 'x');
  for (char& c : s) c = kAlphabet[rng() % kAlphabet.size()];
  return s;
}

std::string reason(int error_number) {
  return std::error_code(error_number, std::generic_category()).message();
}

}  // namespace

struct AtomicFile::Gzip {
  z_stream stream{};
  ~Gzip() { deflateEnd(&stream); }  // safe after a previous deflateEnd: it checks the state
};

AtomicFile::AtomicFile(std::filesystem::path target, Compression compression) : target_(std::move(target)) {
  if (target_.empty() || !target_.has_filename())
    throw InputError("output file \"" + target_.string() + "\": expected a file name");
  std::mt19937_64 rng(std::random_device{}());
  for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
    temp_ = target_;
    temp_ += ".tmp-" + random_suffix(rng);
    // 0666 before the umask, like any file the user's shell would create.
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0 && errno != EEXIST) {
      const int e = errno;
      temp_.clear();
      throw InputError("cannot create output file \"" + target_.string() + "\": " + reason(e));
    }
  }
  if (fd_ < 0) {
    temp_.clear();
    throw InputError("cannot create a temporary file next to \"" + target_.string() + "\"");
  }
  temp_slot_ = track_temp_file(temp_.string());
  buffer_.reserve(kBufferBytes);
  if (compression == Compression::gzip) {
    gzip_ = std::make_unique<Gzip>();
    // windowBits 15 + 16: a gzip wrapper with a zero mtime, so the same input gives the same bytes.
    if (deflateInit2(&gzip_->stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
        Z_OK) {
      gzip_.reset();
      abandon();
      throw InputError("cannot start gzip compression for \"" + target_.string() + "\"");
    }
  }
}

AtomicFile::AtomicFile(AtomicFile&& o) noexcept
    : target_(std::move(o.target_)),
      temp_(std::move(o.temp_)),
      fd_(o.fd_),
      temp_slot_(o.temp_slot_),
      gzip_(std::move(o.gzip_)),
      buffer_(std::move(o.buffer_)),
      bytes_written_(o.bytes_written_),
      bytes_in_(o.bytes_in_),
      committed_(o.committed_) {
  o.fd_ = -1;
  o.temp_slot_ = -1;
  o.temp_.clear();
}

AtomicFile::~AtomicFile() {
  if (!committed_) abandon();
}

void AtomicFile::abandon() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temp_.empty()) ::unlink(temp_.c_str());
  untrack_temp_file(temp_slot_);
  temp_slot_ = -1;
  temp_.clear();
  gzip_.reset();
}

void AtomicFile::fail(const std::string& what, int error_number) {
  abandon();
  throw InputError("cannot write output file \"" + target_.string() + "\": " + what +
                   (error_number != 0 ? ": " + reason(error_number) : std::string()));
}

void AtomicFile::write(std::string_view bytes) {
  if (committed_ || fd_ < 0)
    throw InternalError("AtomicFile::write after commit() or a failure: " + target_.string());
  bytes_in_ += static_cast<std::int64_t>(bytes.size());
  if (!gzip_) bytes_written_ += static_cast<std::int64_t>(bytes.size());
  buffer_.append(bytes);
  if (buffer_.size() >= kBufferBytes) flush_buffer();
}

void AtomicFile::flush_buffer() {
  if (gzip_)
    deflate_into_buffer(buffer_.data(), buffer_.size(), false);
  else
    write_raw(buffer_.data(), buffer_.size());
  buffer_.clear();
}

void AtomicFile::deflate_into_buffer(const char* data, std::size_t size, bool finish) {
  // buffer_ is at most a little over kBufferBytes, far below zlib's 32-bit avail_in.
  z_stream& z = gzip_->stream;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
  z.avail_in = static_cast<uInt>(size);
  char out[16 * 1024];
  int rc = Z_OK;
  do {
    z.next_out = reinterpret_cast<Bytef*>(out);
    z.avail_out = sizeof out;
    rc = deflate(&z, finish ? Z_FINISH : Z_NO_FLUSH);
    if (rc == Z_STREAM_ERROR) fail("gzip compression failed", 0);
    const std::size_t produced = sizeof out - z.avail_out;
    bytes_written_ += static_cast<std::int64_t>(produced);
    write_raw(out, produced);
  } while (z.avail_out == 0 || (finish && rc != Z_STREAM_END));
}

void AtomicFile::write_raw(const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd_, data, size);
    if (n < 0) {
      const int e = errno;
      if (e == EINTR) continue;
      fail("write to \"" + temp_.string() + "\" failed", e);
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

void AtomicFile::commit() {
  if (committed_ || fd_ < 0)
    throw InternalError("AtomicFile::commit twice or after a failure: " + target_.string());
  flush_buffer();
  if (gzip_) {
    deflate_into_buffer(nullptr, 0, true);
    gzip_.reset();
  }
  // fsync first, so that after a crash the renamed target holds the data, not an empty file. Some
  // file systems (pipes, /dev) do not support it: EINVAL / EROFS are not errors here.
  if (::fsync(fd_) != 0 && errno != EINVAL && errno != EROFS) {
    const int e = errno;
    fail("fsync failed", e);
  }
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    const int e = errno;
    fail("close failed", e);
  }
  if (std::rename(temp_.c_str(), target_.c_str()) != 0) {
    const int e = errno;
    fail("rename from \"" + temp_.string() + "\" failed", e);
  }
  untrack_temp_file(temp_slot_);
  temp_slot_ = -1;
  temp_.clear();
  committed_ = true;
}

}  // namespace hybridsim::analysis
