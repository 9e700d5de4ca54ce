// The located YAML reader every input file shares (sim/yaml/): the tree's rules and budget, the
// schema mechanics on a small table of their own, the field reader, and reading input files.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "sim/error.h"
#include "sim/yaml/field_reader.h"
#include "sim/yaml/input_file.h"
#include "sim/yaml/schema.h"
#include "sim/yaml/tree.h"

using namespace hybridsim;
using namespace hybridsim::yaml;

namespace {

std::string parse_error(const std::string& text) {
  try {
    parse_yaml_tree(text, "t.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// Keys and values, as the budget counts them.
std::size_t count_nodes(const TreeNode& n) {
  std::size_t count = 1;
  for (const auto& item : n.items) count += count_nodes(item);
  for (const auto& e : n.entries) count += 1 + count_nodes(e.value);
  return count;
}

std::string repeated(std::string_view piece, std::size_t times) {
  std::string out;
  out.reserve(piece.size() * times);
  for (std::size_t i = 0; i < times; ++i) out += piece;
  return out;
}

}  // namespace

TEST_CASE("yaml tree: every node is located, and an alias's copy is located where its anchor is") {
  const TreeNode t = parse_yaml_tree("a: &x {b: 1}\nc: [*x, 2]\n", "t.yaml");
  CHECK(t.where == "t.yaml:1:1");
  CHECK(t.entries[1].key_where == "t.yaml:2:1");
  const TreeNode& copy = t.find("c")->items[0];
  CHECK(copy.find("b")->scalar == "1");
  CHECK(copy.where == "t.yaml:1:4");  // the anchored mapping, not the alias at 2:5
  CHECK(t.find("c")->items[1].where == "t.yaml:2:9");
  CHECK(parse_yaml_tree("# only a comment\n", "t.yaml").is_null());
  CHECK(parse_yaml_tree_at("{dp: 4}", "--set p={dp: 4}").find("dp")->where == "--set p={dp: 4}");
}

TEST_CASE("yaml tree: a ',' outside [ ] or { } is refused where it is (yaml-cpp 0.7 looped on it)") {
  // Each of these made yaml-cpp start an empty document at the same unread ',' forever: found by
  // the libFuzzer targets (tests/fuzz) in a scenario, a study, a topology and a --set value.
  const std::string what = "invalid YAML: ',' outside a [ ] or { } list; expected a value, or quotes around "
                           "text that starts with ','";
  CHECK(parse_error(",") == "t.yaml:1:1: " + what);
  CHECK(parse_error("# a comment\n, for the three networks\n") == "t.yaml:2:1: " + what);
  CHECK(parse_error("&x ,") == "t.yaml:1:4: " + what);
  CHECK(parse_error("{a: 1}\n, b") == "t.yaml:2:1: " + what);
  CHECK(parse_error("...\n,") == "t.yaml:2:1: " + what);
  // Control characters (a NUL made the same loop) are refused first, where they are; tabs are text.
  CHECK(parse_error(std::string("a: 1\nb: x\0,\0", 13)) ==
        "t.yaml:2:5: invalid YAML: control character U+0000 (a binary file?); expected text");
  CHECK(parse_error("a: \x7f") ==
        "t.yaml:1:4: invalid YAML: control character U+007F (a binary file?); expected text");
  CHECK(parse_yaml_tree("a: \"x\ty\"\r\n", "t.yaml").find("a")->scalar == "x\ty");
  // A ',' inside text is text, as ever.
  CHECK(parse_yaml_tree("a: x, y\n", "t.yaml").find("a")->scalar == "x, y");
  CHECK(parse_yaml_tree("a: ',b'\n", "t.yaml").find("a")->scalar == ",b");
}

TEST_CASE("yaml tree: UTF-16 and UTF-32 are named as such, a UTF-8 byte-order mark is read past") {
  using namespace std::string_literals;
  const std::string utf16 = "t.yaml:1:1: invalid YAML: UTF-16 is not supported; save the file as UTF-8";
  // "a: 1\n" as an editor saves it in UTF-16, little- and big-endian, with and without a mark.
  CHECK(parse_error("\xFF\xFE" "a\0:\0 \0" "1\0\n\0"s) == utf16);
  CHECK(parse_error("\xFE\xFF" "\0a\0:\0 \0" "1\0\n"s) == utf16);
  CHECK(parse_error("a\0:\0 \0" "1\0\n\0"s) == utf16);
  CHECK(parse_error("\0a\0:\0 \0" "1\0\n"s) == utf16);
  CHECK(parse_error("\xFF\xFE\0\0" "a\0\0\0"s) ==
        "t.yaml:1:1: invalid YAML: UTF-32 is not supported; save the file as UTF-8");
  // UTF-8 with a byte-order mark (as some Windows editors save it) reads as without one.
  const TreeNode t = parse_yaml_tree("\xEF\xBB\xBF" "a: 1\nb: [x, y]\n", "t.yaml");
  CHECK(t.find("a")->scalar == "1");
  CHECK(t.find("b")->items[1].scalar == "y");
  CHECK(t.entries[1].key_where == "t.yaml:2:1");
  // A NUL later in a file is still a control character where it is.
  CHECK(parse_error("ab\0"s) ==
        "t.yaml:1:3: invalid YAML: control character U+0000 (a binary file?); expected text");
}

TEST_CASE("yaml tree: a merge key '<<' puts the named mappings' entries in its place, written keys first") {
  // yaml-cpp's parser reports '<<' as a plain key: it was refused as an unknown field (issue 31).
  const TreeNode t = parse_yaml_tree(
      "base: &b {dp: 4, mp: 2, bucket: 25}\n"
      "more: &m {mp: 8, algorithm: ring}\n"
      "one:\n  <<: *b\n  mp: 1\n"
      "two: {x: 0, <<: [*m, *b]}\n",
      "t.yaml");
  const TreeNode& one = *t.find("one");
  REQUIRE(one.entries.size() == 3);
  CHECK(one.entries[0].key == "dp");
  CHECK(one.find("dp")->scalar == "4");
  CHECK(one.find("dp")->where == "t.yaml:1:15");  // where the merged value is written
  CHECK(one.find("mp")->scalar == "1");           // the mapping's own key wins over a merged one
  CHECK(one.find("bucket")->scalar == "25");
  CHECK(one.find("<<") == nullptr);
  // A list of mappings: the first that has a key gives it; merged entries stand where '<<' stood.
  const TreeNode& two = *t.find("two");
  std::vector<std::string> keys;
  for (const auto& e : two.entries) keys.push_back(e.key);
  CHECK(keys == std::vector<std::string>{"x", "mp", "algorithm", "dp", "bucket"});
  CHECK(two.find("mp")->scalar == "8");
  // Quoted, '<<' is an ordinary key; a merge of anything but mappings is refused where it is.
  CHECK(parse_yaml_tree("a: {'<<': 1}\n", "t.yaml").find("a")->find("<<")->scalar == "1");
  CHECK(parse_error("a: {<<: 1}\n") ==
        "t.yaml:1:5: invalid YAML: a merge key '<<' takes a mapping or a list of mappings, such as "
        "<<: *base or <<: [*a, *b]; expected one of those, or '<<' in quotes for a key of that name");
  CHECK(parse_error("b: &b {x: 1}\na: {<<: [*b, 2]}\n").starts_with("t.yaml:2:5: invalid YAML: a merge key"));
  CHECK(parse_error("b: &b {x: 1}\na: {<<: *b, <<: *b}\n") == "t.yaml:2:13: invalid YAML: repeated key '<<'");
  CHECK(parse_error("b: &b {x: 1}\na: {<<: *b, y: 2, y: 3}\n") ==
        "t.yaml:2:19: invalid YAML: repeated key 'y'");
  // A quoted '<<' beside a merge key is an entry of its own, before or after it (it was refused as a
  // repeated '<<', or erased in the merge key's place and its value lost).
  for (const std::string a : {"a: {<<: *b, '<<': 1}\n", "a: {'<<': 1, <<: *b}\n"}) {
    CAPTURE(a);
    const TreeNode quoted = parse_yaml_tree("b: &b {x: 1}\n" + a, "t.yaml");
    REQUIRE(quoted.find("a")->entries.size() == 2);
    CHECK(quoted.find("a")->find("<<")->scalar == "1");
    CHECK(quoted.find("a")->find("x")->scalar == "1");
  }
  // Merged entries stand at the mapping's entries' depth: at 62 lists the mapping is at depth 63 and
  // its values, merged or written, at 64 (accepted); at 63 lists at 65 (refused).
  const auto nested = [](std::size_t lists, const std::string& map) {
    return "b: &b {x: 1}\na: " + repeated("[", lists) + map + repeated("]", lists) + "\n";
  };
  CHECK(parse_error(nested(62, "{x: 1}")) == "no error");
  CHECK(parse_error(nested(62, "{<<: *b}")) == "no error");
  CHECK(parse_error(nested(63, "{x: 1}")).ends_with("invalid YAML: nested more than 64 levels deep"));
  CHECK(parse_error(nested(63, "{<<: *b}")).ends_with("invalid YAML: nested more than 64 levels deep"));
}

TEST_CASE("yaml tree: one document, keys written once and as plain text, at most 64 levels") {
  CHECK(parse_error("a: 1\nb: 2\na: 3\n") == "t.yaml:3:1: invalid YAML: repeated key 'a'");
  CHECK(parse_error("? [a, b]\n: 1\n") ==
        "t.yaml:1:3: invalid YAML: a key must be plain text, not a list or mapping");
  CHECK(parse_error("a: 1\n---\nb: 2\n---\nc: 3\n") ==
        "t.yaml:3:1: invalid YAML: expected one document, found 3 (remove the extra '---')");
  CHECK(parse_error("a: [1, 2\n") == "t.yaml:2:1: invalid YAML: end of sequence flow not found");
  // 64 nested lists hold the scalar at depth 64: accepted; one more list is refused at the 65th.
  CHECK(parse_error(repeated("[", 64) + "x" + repeated("]", 64)) == "no error");
  CHECK(parse_error(repeated("[", 65) + "x" + repeated("]", 65)) ==
        "t.yaml:1:66: invalid YAML: nested more than 64 levels deep");
  // An alias inside its own anchor nests without end: refused by the same depth limit.
  CHECK(parse_error("a: &c {b: 1, c: *c}\n") == "t.yaml:1:11: invalid YAML: nested more than 64 levels deep");
}

TEST_CASE("yaml tree: at most kMaxTreeNodes nodes, aliases expanded, the error at the outermost alias") {
  // A list of n scalars is n + 1 nodes.
  const std::size_t n = kMaxTreeNodes - 1;
  CHECK(count_nodes(parse_yaml_tree("[" + repeated("1,", n) + "]", "t.yaml")) == kMaxTreeNodes);
  // One more item is node 250,001: item k is at column 2 + 2k, and it is item k = 249,999.
  CHECK(parse_error("[" + repeated("1,", n + 1) + "]") ==
        "t.yaml:1:500000: invalid YAML: more than 250000 nodes (the limit for any input file); expected a "
        "smaller "
        "document");
  // Six levels of ten aliases: 1 + 10 + 10 × (1 + 10) + ... nodes; level e alone is 111,111, so
  // the copies run out inside f, in the copy of its second alias (column 14 of line 6).
  const std::string bomb =
      "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
      "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
      "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
      "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
      "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
      "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n";
  CHECK(parse_error(bomb) ==
        "t.yaml:6:12: invalid YAML: more than 250000 nodes once aliases are expanded (the "
        "limit for any input file); expected a smaller document or fewer aliases");
}

TEST_CASE("yaml tree: the largest shipped input, the gnmt profile, is far inside the budget") {
  const std::string path = std::string(HYBRIDSIM_SOURCE_DIR) + "/workloads/profiles/v100/gnmt.yaml";
  const std::size_t nodes = count_nodes(parse_yaml_tree(read_input_file(path, "profile file"), path));
  CHECK(nodes == 17'573);
  CHECK(nodes * 14 < kMaxTreeNodes);  // a margin of 14×
}

namespace {

using K = FieldKind;
constexpr FieldSpec kToyFields[] = {
    {.path = "name", .kind = K::Text, .required = true, .help = "A name."},
    {.path = "link", .kind = K::Section, .help = "A link."},
    {.path = "link.count", .kind = K::Integer, .default_text = "1", .min = 1, .max = 8, .help = "Links."},
    {.path = "link.kind",
     .kind = K::Choice,
     .default_text = "nvlink",
     .choices = "nvlink|pcie",
     .help = "Kind."},
    {.path = "link.speed",
     .kind = K::Rate,
     .words = "auto",
     .min = 0,
     .min_exclusive = true,
     .help = "Speed."},
    {.path = "gpus",
     .kind = K::List,
     .default_text = "[]",
     .type_doc = "a list of GPU ranks",
     .help = "GPUs."},
    {.path = "gpus[]", .kind = K::Integer, .min = 0, .help = "A rank."},
};
constexpr Schema kToy{"toy", kToyFields};

}  // namespace

TEST_CASE("yaml schema: lookups, expected texts and the generated reference of a table") {
  CHECK(kToy.find("gpus[3]") == &kToyFields[6]);
  CHECK(kToy.find("link.colour") == nullptr);
  CHECK_THROWS_WITH_AS(kToy.field("link.colour"), "toy field 'link.colour' is not declared in the schema",
                       InternalError);
  CHECK(kToy.children_of("").size() == 3);  // name, link, gpus
  CHECK(kToy.expected_text(kToy.field("link")) == "a mapping with fields count, kind, speed");
  CHECK(kToy.expected_text(kToy.field("link.count")) == "a whole number from 1 to 8");
  CHECK(kToy.expected_text(kToy.field("link.speed")) ==
        "auto or a bandwidth such as \"25 GB/s\" or \"100 Gb/s\", > 0");
  CHECK(kToy.expected_text(kToy.field("gpus")) == "a list of GPU ranks");
  CHECK(kToy.reference_markdown() ==
        "| field | type | default | meaning |\n|---|---|---|---|\n"
        "| `name` | text | required | A name. |\n"
        "| `link` | mapping | — | A link. |\n"
        "| `link.count` | integer 1–8 | `1` | Links. |\n"
        "| `link.kind` | nvlink, pcie | `nvlink` | Kind. |\n"
        "| `link.speed` | auto or bandwidth > 0 | — | Speed. |\n"
        "| `gpus` | a list of GPU ranks | `[]` | GPUs. |\n"
        "| `gpus[]` | integer ≥ 0 | — | A rank. |\n");
  // kitten → sitting: substitute k/s, substitute e/i, insert g = 3 edits.
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("", "abc") == 3);
  const std::vector<std::string> names = {"nodes", "preset", "topology", "fabric"};
  CHECK(closest_match("prest", names) == "preset");
  CHECK(did_you_mean("nodez", names) == " (did you mean 'nodes'?)");
  CHECK(did_you_mean("bandwidth", names).empty());
}

TEST_CASE("yaml field reader: declared keys, defaults located at their mapping, locations recorded") {
  WhereRecord where;
  FieldReader r(kToy, &where, "t.yaml");
  const TreeNode t = parse_yaml_tree("name: box\nlink: {count: 4}\ngpus: [0, 3]\n", "t.yaml");
  const TreeNode& root = r.document(t);
  const TreeNode* link = r.section(&root, "link");
  CHECK(r.integer(link, "link.count") == 4);
  CHECK(r.choice(link, "link.kind") == "nvlink");  // the default
  CHECK(r.value(link, "link.kind")->where == "t.yaml:2:7");
  CHECK_FALSE(r.rate_opt(link, "link.speed"));
  CHECK(r.to_integer(r.value(&root, "gpus")->items[1], "gpus[1]") == 3);
  CHECK(where.at("link.count") == "t.yaml:2:15");
  CHECK(where.count("link.kind") == 0);  // not written
  const auto error_of = [&](const std::string& text) {
    try {
      FieldReader fresh(kToy, nullptr, "t.yaml");
      const TreeNode tree = parse_yaml_tree(text, "t.yaml");
      const TreeNode& doc = fresh.document(tree);
      const TreeNode* l = fresh.section(&doc, "link");
      fresh.integer(l, "link.count");
      fresh.choice(l, "link.kind");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_of("") == "t.yaml:1:1: name: missing required field; expected a single value (text)");
  CHECK(error_of("name: a\nlinks: {}\n") ==
        "t.yaml:2:1: links: unknown field (did you mean 'link'?); expected one of: name, link, gpus");
  // A flow mapping with no space after a colon is one key ("count:2") with no value: said how to write it.
  CHECK(error_of("name: a\nlink: {count:2}\n") ==
        "t.yaml:2:8: link.count:2: unknown field (YAML reads 'count:2' as one key: write 'count: 2', with a "
        "space after the colon); expected one of: count, kind, speed");
  CHECK(error_of("name: a\nlink: {count: 9}\n") ==
        "t.yaml:2:15: link.count: got \"9\"; expected a whole number from 1 to 8");
  CHECK(
      error_of("name: a\nlink: {kind: pci}\n") ==
      "t.yaml:2:14: link.kind: unknown value \"pci\" (did you mean 'pcie'?); expected one of: nvlink, pcie");
  CHECK(error_of("name: a\nlink: [1]\n") ==
        "t.yaml:2:7: link: got a list; expected a mapping with fields count, kind, speed");
}

TEST_CASE("input files: read whole, a directory, a device, a missing file or one over the limit is refused") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("hybridsim-input-file-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "s.yaml").string();
  std::ofstream(file) << "a: 1\n";
  CHECK(read_input_file(file, "scenario file") == "a: 1\n");
  const auto error_of = [](const std::string& path) {
    try {
      read_input_file(path, "scenario file");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_of(dir.string()) == "cannot open scenario file \"" + dir.string() + "\": is a directory");
  CHECK(error_of("/dev/zero") ==
        "cannot open scenario file \"/dev/zero\": not a regular file (a character device)");
  CHECK(error_of((dir / "none.yaml").string()) ==
        "cannot open scenario file \"" + (dir / "none.yaml").string() + "\": No such file or directory");
  // 16 MiB + 1 byte (a sparse file: nothing is written): refused from its size alone.
  std::filesystem::resize_file(file, kMaxInputFileBytes + 1);
  CHECK(error_of(file) == "cannot open scenario file \"" + file +
                              "\": 16777217 bytes, over the limit of 16 MiB for "
                              "an input file");
  std::filesystem::resize_file(file, kMaxInputFileBytes);
  CHECK(read_input_file(file, "scenario file").size() == kMaxInputFileBytes);
  std::filesystem::remove_all(dir);
}

TEST_CASE("input files: a FIFO (a pipe, as `<(cat s.yaml)` gives) is read once, up to the limit") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("hybridsim-fifo-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string fifo = (dir / "pipe").string();
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  const auto write_fifo = [&](std::size_t bytes) {
    return std::thread([fifo, bytes] { std::ofstream(fifo) << std::string(bytes, '#'); });
  };
  std::thread writer = write_fifo(100'000);  // more than one pipe buffer (64 KiB)
  CHECK(read_input_file(fifo, "scenario file") == std::string(100'000, '#'));
  writer.join();
  writer = write_fifo(kMaxInputFileBytes + 1);
  std::string error;
  try {
    read_input_file(fifo, "scenario file");
  } catch (const InputError& e) {
    error = e.what();
  }
  writer.join();  // the reader took every byte before refusing them, so the writer is done
  CHECK(error == "cannot open scenario file \"" + fifo +
                     "\": more than 16777216 bytes, over the limit of 16 MiB for "
                     "an input file");
  std::filesystem::remove_all(dir);
}
