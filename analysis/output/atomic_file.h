// An output file that appears whole or not at all: bytes go to a temporary file next to the target
// (`<target>.tmp-XXXXXX`, same directory, so the rename is atomic); commit() renames it over the
// target, and destruction without commit() deletes it. Optionally gzip-compressed on the way (zlib).
//   AtomicFile out("trace.json.gz", AtomicFile::Compression::gzip);
//   out.write("{...}");  out.commit();   // trace.json.gz now exists, complete; out.bytes_written() = size
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace hybridsim::analysis {

class AtomicFile {
 public:
  enum class Compression { none, gzip };

  // Creates the temporary file; throws InputError naming the target and the reason if it cannot.
  explicit AtomicFile(std::filesystem::path target, Compression compression = Compression::none);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  AtomicFile(AtomicFile&&) noexcept;
  AtomicFile& operator=(AtomicFile&&) = delete;
  // Without commit(): closes and deletes the temporary file; the target is left as it was.
  ~AtomicFile();

  // Appends bytes (buffered; compressed first if gzip). Throws InputError on an I/O failure, after
  // which the file can only be abandoned.
  void write(std::string_view bytes);
  // Flushes, finishes the gzip stream, fsyncs and renames the temporary file over the target.
  // Throws InputError on failure (the temporary file is then removed). No writes after it.
  void commit();

  // Bytes of file content produced so far: after commit() the size of the target file. With gzip,
  // compressed bytes (zlib may hold back up to its window until commit()).
  std::int64_t bytes_written() const { return bytes_written_; }
  // Bytes passed to write(), before compression.
  std::int64_t bytes_in() const { return bytes_in_; }
  const std::filesystem::path& target() const { return target_; }
  const std::filesystem::path& temp_path() const { return temp_; }
  bool is_committed() const { return committed_; }

 private:
  struct Gzip;  // zlib's stream state, kept out of this header

  void write_raw(const char* data, std::size_t size);
  void flush_buffer();
  void deflate_into_buffer(const char* data, std::size_t size, bool finish);
  [[noreturn]] void fail(const std::string& what, int error_number);
  void abandon() noexcept;

  std::filesystem::path target_;
  std::filesystem::path temp_;
  int fd_ = -1;
  int temp_slot_ = -1;  // in the registry that removes temp_ on a signal (temp_files.h)
  std::unique_ptr<Gzip> gzip_;
  std::string buffer_;  // bytes waiting for the next write(2)
  std::int64_t bytes_written_ = 0;
  std::int64_t bytes_in_ = 0;
  bool committed_ = false;
};

}  // namespace hybridsim::analysis
