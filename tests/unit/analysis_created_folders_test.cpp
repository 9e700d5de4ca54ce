// CreatedFolders: the folders a refused command made for its outputs are removed again, and only
// those: one that existed before, one kept, or one that holds a file stays.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "analysis/output/created_folders.h"
#include "tests/unit/test_files.h"

namespace fs = std::filesystem;
using hybridsim::analysis::CreatedFolders;
using hybridsim::testing::ScratchDir;

TEST_CASE("created folders: a refusal removes the folders made, deepest first, and nothing else") {
  ScratchDir scratch;
  const fs::path old = scratch.path / "old";
  fs::create_directories(old);
  try {
    CreatedFolders made;
    made.create(old / "a" / "b");
    CHECK(fs::is_directory(old / "a" / "b"));
    throw std::runtime_error("refused");
  } catch (const std::runtime_error&) {
  }
  // old/ was there before: it stays; a/ and a/b/ were made: both go.
  CHECK(fs::is_directory(old));
  CHECK_FALSE(fs::exists(old / "a"));
}

TEST_CASE("created folders: kept once the command finished, and never removed while they hold a file") {
  ScratchDir scratch;
  {
    CreatedFolders made;
    made.create(scratch.path / "kept" / "sub");
    made.keep();
  }
  CHECK(fs::is_directory(scratch.path / "kept" / "sub"));
  {
    CreatedFolders made;
    made.create(scratch.path / "full" / "sub");
    std::ofstream(scratch.path / "full" / "sub" / "trace.json") << "{}";
    made.create(scratch.path / "full" / "other");  // a second folder under the same parent
  }
  // other/ is empty and goes; sub/ holds a file, so sub/ and full/ stay.
  CHECK(fs::exists(scratch.path / "full" / "sub" / "trace.json"));
  CHECK_FALSE(fs::exists(scratch.path / "full" / "other"));
}

TEST_CASE("created folders: a file written goes with them unless kept, so outputs appear all or none") {
  ScratchDir scratch;
  const fs::path trace = scratch.path / "traces" / "t.json";
  {
    CreatedFolders made;
    made.create(trace.parent_path());
    std::ofstream(trace) << "{}";
    made.written(trace);  // the trace, whole; the summaries after it fail
  }
  CHECK_FALSE(fs::exists(scratch.path / "traces"));
  {
    CreatedFolders made;
    made.create(trace.parent_path());
    std::ofstream(trace) << "{}";
    made.written(trace);
    made.keep();
  }
  CHECK(fs::exists(trace));
}
