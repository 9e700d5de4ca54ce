// The house plan's one rule between rooms (../shared/DESIGN.md, README "Layout"), checked on the
// source tree itself: every project include names a room at or below the including file's own, and a
// room's private headers (`*_detail.h`, `*_parts.h`) are included only inside that
// room (and by the tests that test them) and never include the entry header they serve.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace fs = std::filesystem;

// Rooms from the bottom up; a file's room is the longest prefix that matches its path. A room may
// include its own files and those of every room listed before it. workloads/'s sub-rooms are ordered
// too: a step program is built from profiles, the GPU and generated profiles, and communication and
// memory are planned on it.
struct Room {
  std::string_view prefix;
  int rank;
};
constexpr Room kRooms[] = {
    {"sim/", 0},
    {"sim/yaml/", 1},  // the located input reader: beside the kernel, never included by it
    {"topology/", 2},
    {"workloads/profile/", 3},
    {"workloads/gpu/", 4},
    {"workloads/generators/", 5},
    {"workloads/import/", 6},
    {"workloads/program/", 7},
    {"workloads/comm/", 8},
    {"workloads/step/", 9},
    {"workloads/memory/", 10},
    {"scenarios/", 11},
    {"analysis/", 12},
};

const Room* room_of(std::string_view path) {
  const Room* best = nullptr;
  for (const Room& r : kRooms)
    if (path.starts_with(r.prefix) && (best == nullptr || r.prefix.size() > best->prefix.size())) best = &r;
  return best;
}

struct Include {
  std::string file;  // relative to the source folder
  int line;
  std::string target;  // as written, between the quotes or angle brackets
};

std::vector<Include> project_includes(const fs::path& source) {
  static const std::regex include_re(R"(^\s*#\s*include\s+["<]([^">]+)[">])");
  std::vector<Include> out;
  for (const char* top : {"sim", "topology", "workloads", "scenarios", "analysis", "tests"}) {
    for (const auto& entry : fs::recursive_directory_iterator(source / top)) {
      const std::string ext = entry.path().extension().string();
      if (ext != ".h" && ext != ".cpp") continue;
      const std::string rel = fs::relative(entry.path(), source).generic_string();
      std::ifstream in(entry.path());
      std::string text;
      std::smatch m;
      for (int line = 1; std::getline(in, text); ++line)
        if (std::regex_search(text, m, include_re)) out.push_back({rel, line, m[1].str()});
    }
  }
  std::sort(out.begin(), out.end(), [](const Include& a, const Include& b) {
    return a.file != b.file ? a.file < b.file : a.line < b.line;
  });
  return out;
}

std::string folder_of(std::string_view path) {
  const auto slash = path.rfind('/');
  return std::string(path.substr(0, slash == std::string_view::npos ? 0 : slash + 1));
}

// "workloads/import/import_kineto_detail.h" -> "workloads/import/import_kineto.h"; empty if the
// header is not private.
std::string entry_header_of_private(std::string_view path) {
  for (std::string_view suffix : {"_detail.h", "_parts.h"})
    if (path.ends_with(suffix)) return std::string(path.substr(0, path.size() - suffix.size())) + ".h";
  return {};
}

const std::vector<Include>& includes() {
  static const std::vector<Include> all = project_includes(HYBRIDSIM_SOURCE_DIR);
  return all;
}

}  // namespace

TEST_CASE("house rules: the tree is scanned (the rules below have something to check)") {
  // Every layer appears, and workloads/ has its sub-rooms: a scan that found nothing would pass
  // every rule below.
  for (const Room& r : kRooms) {
    const bool seen = std::any_of(includes().begin(), includes().end(),
                                  [&](const Include& i) { return room_of(i.file) == &r; });
    CHECK_MESSAGE(seen, "no source file in room " << r.prefix);
  }
  CHECK(includes().size() > 500);
}

TEST_CASE("house rules: no include runs upward, between layers or between workloads' rooms") {
  int upward = 0;
  for (const Include& inc : includes()) {
    const Room* from = room_of(inc.file);
    const Room* to = room_of(inc.target);
    if (from == nullptr || to == nullptr) continue;  // tests/, third-party headers
    if (to->rank > from->rank) {
      ++upward;
      FAIL_CHECK(inc.file << ":" << inc.line << " includes " << inc.target << ": " << from->prefix
                          << " is below " << to->prefix);
    }
  }
  CHECK(upward == 0);
}

TEST_CASE("house rules: no file in workloads/ outside a sub-room, and the kernel never reads YAML") {
  for (const auto& entry : fs::directory_iterator(fs::path(HYBRIDSIM_SOURCE_DIR) / "workloads")) {
    const std::string ext = entry.path().extension().string();
    CHECK_MESSAGE(!(ext == ".h" || ext == ".cpp"),
                  entry.path().filename().string() << " lies in workloads/ itself, not in a room");
  }
  for (const Include& inc : includes()) {
    const bool kernel = inc.file.starts_with("sim/") && !inc.file.starts_with("sim/yaml/");
    if (kernel) CHECK_MESSAGE(!inc.target.starts_with("yaml-cpp"), inc.file << ":" << inc.line);
  }
}

TEST_CASE("house rules: private headers stay in their room and never include their entry header") {
  int checked = 0;
  for (const Include& inc : includes()) {
    const std::string entry = entry_header_of_private(inc.target);
    if (entry.empty()) continue;
    ++checked;
    const bool same_room = folder_of(inc.file) == folder_of(inc.target);
    CHECK_MESSAGE((same_room || inc.file.starts_with("tests/")),
                  inc.file << ":" << inc.line << " includes " << inc.target << ", private to "
                           << folder_of(inc.target));
  }
  CHECK(checked > 10);
  for (const Include& inc : includes()) {
    const std::string entry = entry_header_of_private(inc.file);
    if (!entry.empty())
      CHECK_MESSAGE(inc.target != entry, inc.file << ":" << inc.line << " includes its entry header "
                                                  << entry << ": the types they share belong below both");
  }
}
