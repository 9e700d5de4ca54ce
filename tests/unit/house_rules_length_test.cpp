// The house rule "no function over 80 lines outside tests" (DESIGN.md, "Habits"; issue 26), checked
// on the source tree itself with the text scan of tests/unit/function_lengths.h, which is first held
// to hand-counted snippets so that a scan that found nothing, or everything, cannot pass.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "function_lengths.h"

namespace {

namespace fs = std::filesystem;
using hybridsim::test::function_bodies;

constexpr int kLongestFunction = 80;

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("function lengths: the scan counts bodies, not scopes, lambdas, literals or comments") {
  const char* source = R"src(#include <vector>
#define OPEN {
namespace a::b {
// a comment with a brace {
struct Table {
  int x;
  int get() const { return x; }
};
enum class Mode : int { One, Two };
const int kValues[] = {1, 2, 3};
int f(int y) {
  auto g = [](int z) {
    return z + 1;
  };
  const char* s = "}{";
  const char* r = R"x(}
{)x";
  if (y > 0) {
    return g(y) + 1'000;
  }
  return 0;
}
}  // namespace a::b
)src";
  const auto bodies = function_bodies(source);
  REQUIRE(bodies.size() == 2);
  CHECK(bodies[0].first_line == 7);  // Table::get, one line
  CHECK(bodies[0].lines == 1);
  CHECK(bodies[1].first_line == 11);  // f, its lambda and blocks inside it
  CHECK(bodies[1].lines == 12);
  CHECK(bodies[1].head == "int f(int y)");
}

TEST_CASE(
    "function lengths: constructors with braced member initialisers, inline namespaces, prefixed raw "
    "strings") {
  const char* source = R"src(inline namespace v1 {
class Counter {
 public:
  Counter(int a, int b) : a_{a}, b_{b} {
    a_ += b_;
    b_ = 0;
  }
  const char* text() const { return u8R"x(}{)x"; }
  int a_, b_;
};
}  // namespace v1
)src";
  const auto bodies = function_bodies(source);
  REQUIRE(bodies.size() == 2);
  CHECK(bodies[0].first_line == 4);  // the constructor's body, its initialisers on the same line
  CHECK(bodies[0].lines == 4);
  CHECK(bodies[0].head == "Counter(int a, int b) : a_{a}, b_{b}");
  CHECK(bodies[1].first_line == 8);
  CHECK(bodies[1].lines == 1);
}

TEST_CASE("house rules: no function over 80 lines outside tests") {
  int scanned = 0;
  for (const char* top : {"sim", "topology", "workloads", "scenarios", "analysis"}) {
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(HYBRIDSIM_SOURCE_DIR) / top)) {
      const std::string ext = entry.path().extension().string();
      if (ext != ".h" && ext != ".cpp") continue;
      for (const auto& body : function_bodies(read_file(entry.path()))) {
        ++scanned;
        CHECK_MESSAGE(body.lines <= kLongestFunction,
                      fs::relative(entry.path(), HYBRIDSIM_SOURCE_DIR).generic_string()
                          << ":" << body.first_line << ": " << body.lines << " lines: " << body.head);
      }
    }
  }
  CHECK(scanned > 1000);  // the tree has about 1,600 functions: a scan that found few is broken
}
