// `hybridsim validate`'s table: each column starts where its title does, whatever its cells' widths.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "analysis/output/text_table.h"
#include "analysis/validate/validate_run.h"

using namespace hybridsim;
using namespace hybridsim::analysis;

namespace {

// The display column at which `cell` first starts in `line`.
std::size_t column_of(const std::string& line, const std::string& cell) {
  const std::size_t at = line.find(cell);
  REQUIRE(at != std::string::npos);
  return display_columns(std::string_view(line).substr(0, at));
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace

TEST_CASE("validate table: the error and case columns widen to their widest cell") {
  // A step time read in the wrong unit: 306 ms against a published 0.306 is +99,900% (error
  // (306 − 0.306) / 0.306 = 999.0, printed "+99900.0%", 9 characters, as wide as the column was: it
  // ran into the tolerance, "+99900.0%5%"). A case name of 50 characters, past the 46 the column had,
  // pushed the rest of its row out of line with the titles.
  ValidateResult wrong;
  wrong.reference.name = "gnmt step time with its unit taken as s, not ms";
  wrong.reference.metric = CaseMetric::StepTime;
  wrong.reference.published = 0.306;
  wrong.reference.tolerance = 0.05;
  wrong.simulated = 306;
  wrong.error = (306 - 0.306) / 0.306;
  wrong.what = "dp 8 × mp 1";
  ValidateResult near = wrong;
  near.reference.name = std::string(50, 'n');
  near.reference.published = 300;
  near.simulated = 306;
  near.error = 0.02;
  near.within = true;
  const std::vector<std::string> lines = lines_of(validate_table({wrong, near}));
  REQUIRE(lines.size() > 4);
  const std::string& title = lines[2];
  const std::string& first = lines[3];
  const std::string& second = lines[4];
  CHECK(first.find("+99900.0% 5%") != std::string::npos);
  // Every cell starts in its title's column, in both rows.
  for (const std::string* row : {&first, &second}) {
    CHECK(column_of(*row, "prediction") == column_of(title, "kind"));
    CHECK(column_of(*row, "step_time") == column_of(title, "metric"));
    CHECK(column_of(*row, "306.000") == column_of(title, "simulated"));
    CHECK(column_of(*row, "5%") == column_of(title, "tolerance"));
    CHECK(column_of(*row, "dp 8") == display_columns(title) - 3);  // the title line ends in "ran"
  }
  CHECK(column_of(first, "+99900.0%") == column_of(title, "error"));
  CHECK(column_of(second, "+2.0%") == column_of(title, "error"));
  // A table of ordinary cells keeps the widths it had: the case column 46 wide.
  const std::vector<std::string> plain = lines_of(validate_table({ValidateResult{}}));
  CHECK(column_of(plain[2], "kind") == 2 + 46);
}

TEST_CASE("validate: a running case is told with the command's end, not only once it ends") {
  // Issue 31, done-when 3: one case, an all-reduce of 1 GiB over 8,192 DGX-1, ran 44 s without a line
  // (validate's lines counted finished cases). A running case now tells its share done, from its own
  // time left (its collective's events of their count in full here), to the cases' lines: a clock a
  // second later at each reading makes one due while the case runs, and it gives the command's end.
  ValidateCase c;
  c.name = "all-reduce of 1 GiB over 2 DGX-1";
  c.where = "cases.yaml:2:5";
  c.kind = CaseKind::Model;
  CollectiveCase all_reduce;
  all_reduce.nodes = 2;
  all_reduce.size = sim::Bytes::gib(1);
  c.collective = all_reduce;
  c.metric = CaseMetric::BusBandwidth;
  c.unit = "GB/s";
  c.published = 48;
  c.tolerance = 0.5;
  std::ostringstream out;
  double now = 100;
  const auto results = run_validate_cases({c}, {}, &out, [&now] { return now += 1; });
  REQUIRE(results.size() == 1);
  CHECK(results[0].within);
  CAPTURE(out.str());
  int running = 0;
  for (const std::string& line : lines_of(out.str())) {
    if (!line.ends_with("; case 1 of 1 (all-reduce of 1 GiB over 2 DGX-1) running")) continue;
    ++running;
    // Counted done only when whole: the running case's share is in the percentage alone.
    CHECK(line.find(", 0 of 1 cases done (") != std::string::npos);
    CHECK(line.find(" left of about ") != std::string::npos);
    CHECK(line.find(" in all; ") != std::string::npos);
  }
  CHECK(running >= 1);
}
