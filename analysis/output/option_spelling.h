// How a refusal names an option the user gave, in the language they gave it in (issue 31): the
// command line's `--min-bytes "lots"` or the Python module's keyword `min_bytes='lots'`. Options are
// named by the command line's long name; the Python keyword is that name with underscores (a few
// differ, listed in option_spelling.cpp).
//   const OptionSpelling py = OptionSpelling::python();
//   py.quoted("min-bytes", "lots")  // "min_bytes='lots'"; the command line's: "--min-bytes \"lots\""
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "sim/error.h"

namespace hybridsim::analysis {

class OptionSpelling {
 public:
  enum class Language : std::uint8_t { CommandLine, Python };

  static OptionSpelling command_line() { return OptionSpelling(Language::CommandLine); }
  static OptionSpelling python() { return OptionSpelling(Language::Python); }
  OptionSpelling() = default;  // the command line's

  Language language() const { return language_; }
  bool is_python() const { return language_ == Language::Python; }

  // "--max-events" / "max_events".
  std::string name(std::string_view option) const;
  // Its value as text that was read, for a refusal of a value it could not read:
  // `--memory "lots"` / `memory='lots'`.
  std::string quoted(std::string_view option, std::string_view text) const;
  // A value the user gave, read: "--algorithm tree" / "algorithm='tree'" (text values are quoted in
  // Python, as the user wrote them).
  std::string said(std::string_view option, std::string_view text) const;
  // A number the user gave: "--gpus 64" / "gpus=64".
  std::string said_number(std::string_view option, std::string_view number) const;
  // What the option takes, for "raise it (...)": "--max-events N" / "max_events=N".
  std::string takes(std::string_view option, std::string_view placeholder) const;
  // A switch that turns something off: "--no-ib-sensitivity" / "ib_sensitivity=False".
  std::string switched_off(std::string_view option) const;
  // A switch that turns something on: "--show-unfit" / "show_unfit=True".
  std::string switched_on(std::string_view option) const;

 private:
  explicit OptionSpelling(Language language) : language_(language) {}
  Language language_ = Language::CommandLine;
};

// A text as Python's repr() writes a string: 'lots', or "it's" when it holds a single quote.
std::string python_repr(std::string_view text);

// `look_up(text)` of a name given to `option` (a preset, an objective, a curve variant, a fabric):
// in Python its InputError leads with the keyword as written (`cluster='nope': unknown topology
// preset "nope": ...`); the command line's quotes the name already and is left as it is.
template <class LookUp>
auto look_up_named(const OptionSpelling& spelling, std::string_view option, const std::string& text,
                   LookUp look_up) -> decltype(look_up(text)) {
  if (!spelling.is_python()) return look_up(text);
  try {
    return look_up(text);
  } catch (const InputError& e) {
    throw InputError(spelling.quoted(option, text) + ": " + e.what());
  }
}

}  // namespace hybridsim::analysis
