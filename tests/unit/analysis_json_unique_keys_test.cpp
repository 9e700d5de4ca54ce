// Every JSON object `hybridsim run` writes names each key once: a reader that keeps the last (or the
// first) of two equal keys silently loses the other. Checked on a live run whose critical GPU is not
// its largest (two peaks, once printed under the same name) — summary.json, the JSON on stdout and
// the trace — and on every committed golden JSON file.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/unit/test_files.h"

namespace fs = std::filesystem;
using hybridsim::testing::read_whole_file;
using hybridsim::testing::ScratchDir;

namespace {

// A SAX reader that notes each key seen twice in one object, as "key (object N)".
class DuplicateKeys final : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::vector<std::string> found;

  bool start_object(std::size_t) override {
    open_.push_back({++objects_, {}});
    return true;
  }
  bool key(string_t& k) override {
    if (!open_.back().keys.insert(k).second)
      found.push_back(k + " (object " + std::to_string(open_.back().number) + ")");
    return true;
  }
  bool end_object() override {
    open_.pop_back();
    return true;
  }
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t at, const std::string&, const nlohmann::detail::exception& e) override {
    found.push_back("not JSON at byte " + std::to_string(at) + ": " + e.what());
    return false;
  }

 private:
  struct Open {
    int number;  // 1 for the first object the text opens
    std::set<std::string> keys;
  };
  std::vector<Open> open_;  // the objects being read, innermost last
  int objects_ = 0;
};

std::vector<std::string> duplicate_keys(const std::string& text) {
  DuplicateKeys reader;
  nlohmann::json::sax_parse(text, &reader);
  return reader.found;
}

}  // namespace

TEST_CASE("json unique keys: the checker finds a key twice in one object, not in two objects") {
  CHECK(duplicate_keys(R"({"a": 1, "b": {"a": 2}, "c": [{"a": 3}, {"a": 4}]})").empty());
  CHECK(duplicate_keys(R"({"a": 1, "b": {"x": 2, "x": 3}, "a": 5})") ==
        std::vector<std::string>{"x (object 2)", "a (object 1)"});
  CHECK(duplicate_keys("{\"a\": ").size() == 1);
}

TEST_CASE(
    "json unique keys: hybridsim run's summary.json, JSON summary and trace, critical GPU not largest") {
  const ScratchDir dir;
  // dgx1-gnmt-mp2-rules: GPU 3 holds more than the critical GPU 0 (its table prints two peaks).
  const std::string cmd =
      std::string(HYBRIDSIM_CLI) + " run " + HYBRIDSIM_SOURCE_DIR +
      "/scenarios/examples/dgx1-gnmt-mp2-rules.yaml -q --format json --set 'outputs.formats=[json]' --out " +
      dir.path.string() + " --trace " + (dir.path / "t.json").string() + " --trace-detail steps > " +
      (dir.path / "stdout.json").string();
  REQUIRE(std::system(cmd.c_str()) == 0);
  const std::string summary = read_whole_file(dir.path / "summary.json");
  CHECK(summary.find("\"peak memory, largest GPU\"") != std::string::npos);
  CHECK(duplicate_keys(summary).empty());
  CHECK(read_whole_file(dir.path / "stdout.json") == summary);
  const std::string trace = read_whole_file(dir.path / "t.json");
  CHECK(trace.size() > 1000);
  CHECK(duplicate_keys(trace).empty());
}

TEST_CASE("json unique keys: every committed golden JSON file") {
  int files = 0;
  for (const auto& entry :
       fs::recursive_directory_iterator(fs::path(HYBRIDSIM_SOURCE_DIR) / "tests/golden")) {
    if (entry.path().extension() != ".json") continue;
    CAPTURE(entry.path().string());
    CHECK(duplicate_keys(read_whole_file(entry.path())).empty());
    ++files;
  }
  CHECK(files >= 10);
}
