// AtomicFile: a file appears whole on commit() or not at all; gzip output decompresses exactly.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "analysis/output/atomic_file.h"
#include "sim/error.h"
#include "tests/unit/test_files.h"

using namespace hybridsim;
using analysis::AtomicFile;
namespace fs = std::filesystem;

using hybridsim::testing::read_whole_file;
using TempDir = hybridsim::testing::ScratchDir;
using hybridsim::testing::read_gzip_file;

namespace {

}  // namespace

TEST_CASE("analysis: AtomicFile writes a temporary file and renames it on commit") {
  TempDir dir;
  const fs::path target = dir.path / "out.json";
  {
    AtomicFile f(target);
    // The temporary file sits next to the target, so the rename stays in one file system.
    CHECK(f.temp_path().parent_path() == dir.path);
    CHECK(f.temp_path().filename().string().rfind("out.json.tmp-", 0) == 0);
    f.write("hello ");
    f.write(std::string(100'000, 'x'));  // more than the 64 KiB buffer: reaches the file early
    CHECK(fs::exists(f.temp_path()));
    CHECK_FALSE(fs::exists(target));
    f.commit();
    CHECK(f.is_committed());
    // 6 + 100,000 bytes.
    CHECK(f.bytes_written() == 100'006);
  }
  CHECK(dir.entries() == std::vector<std::string>{"out.json"});
  CHECK(read_whole_file(target) == "hello " + std::string(100'000, 'x'));
}

TEST_CASE("analysis: an abandoned AtomicFile leaves nothing and the target untouched") {
  TempDir dir;
  const fs::path target = dir.path / "result.csv";
  std::ofstream(target) << "previous run\n";
  {
    AtomicFile f(target);
    f.write(std::string(200'000, 'y'));  // partly flushed to the temporary file already
  }                                      // no commit: as if an exception had unwound the run
  CHECK(dir.entries() == std::vector<std::string>{"result.csv"});
  CHECK(read_whole_file(target) == "previous run\n");
  {
    AtomicFile f(target, AtomicFile::Compression::gzip);
    f.write("abc");
  }
  CHECK(dir.entries() == std::vector<std::string>{"result.csv"});
}

TEST_CASE("analysis: AtomicFile with gzip decompresses to exactly what was written") {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 20'000; ++i) text += "{\"name\":\"kernel " + std::to_string(i) + "\"},\n";
  const fs::path target = dir.path / "t.json.gz";
  AtomicFile f(target, AtomicFile::Compression::gzip);
  for (std::size_t i = 0; i < text.size(); i += 1'000) f.write(std::string_view(text).substr(i, 1'000));
  f.commit();
  CHECK(f.bytes_in() == static_cast<std::int64_t>(text.size()));
  CHECK(f.bytes_written() == static_cast<std::int64_t>(fs::file_size(target)));
  CHECK(f.bytes_written() < f.bytes_in() / 4);  // repetitive text compresses well
  CHECK(read_gzip_file(target) == text);
  CHECK(dir.entries() == std::vector<std::string>{"t.json.gz"});
}

TEST_CASE("analysis: AtomicFile reports unusable paths and misuse") {
  TempDir dir;
  CHECK_THROWS_WITH_AS(AtomicFile(dir.path / "no-such-dir" / "x.json"), doctest::Contains("no-such-dir"),
                       InputError);
  CHECK_THROWS_AS(AtomicFile(""), InputError);
  AtomicFile f(dir.path / "x");
  f.commit();
  CHECK_THROWS_AS(f.write("late"), InternalError);
  CHECK_THROWS_AS(f.commit(), InternalError);
  CHECK(fs::file_size(dir.path / "x") == 0);
}
