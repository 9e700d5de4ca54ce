// The one way subcommands read their options: parse, print the help and stop on --help, else refuse
// empty values and check required options. Returns false when the help was printed (the command
// then exits 0).
//   if (!parse_options(argc, argv, options, positional, vm)) return 0;
//   refuse_without(vm, "pcie-only", "rings", "--rings");  // topology --pcie-only needs --rings
#pragma once
#include <algorithm>
#include <boost/program_options.hpp>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "scenarios/loader/override_origin.h"
#include "sim/decimal.h"
#include "sim/error.h"
#include "sim/text.h"
#include "sim/yaml/schema.h"

namespace hybridsim::cli {

// Whether the command line gave the option (a default value is not given).
inline bool given(const boost::program_options::variables_map& vm, const std::string& option) {
  return vm.count(option) > 0 && !vm[option].defaulted();
}

// An empty value ("--memory $UNSET" after the shell has dropped the variable's text) would otherwise
// read as "all" or "the default": refused, naming the option. Typed options (whole numbers, sizes
// parsed by Boost) already refuse "" themselves; this covers text and lists of text.
// The refusal of an option given an empty value, as both checks below word it.
inline std::string empty_option_text(const std::string& long_name) {
  return "--" + long_name + " is empty (an unset shell variable?); give a value or leave the option out";
}

inline void refuse_empty_values(const boost::program_options::variables_map& vm,
                                const boost::program_options::options_description& options,
                                const boost::program_options::positional_options_description& positional) {
  for (const auto& [name, value] : vm) {
    if (value.defaulted() || value.empty()) continue;
    // A switch (--trace-gzip) takes no value, and Boost stores an empty one for it.
    const auto* option = options.find_nothrow(name, false);
    if (option == nullptr || option->semantic()->max_tokens() == 0) continue;
    bool empty = false;
    if (const auto* text = boost::any_cast<std::string>(&value.value())) empty = text->empty();
    else if (const auto* list = boost::any_cast<std::vector<std::string>>(&value.value()))
      for (const auto& item : *list) empty = empty || item.empty();
    if (!empty) continue;
    bool is_positional = false;
    for (unsigned i = 0; i < positional.max_total_count() && i < 64; ++i)
      is_positional = is_positional || positional.name_for_position(i) == name;
    std::string words = name;  // "shard-folder": the shard folder argument
    std::replace(words.begin(), words.end(), '-', ' ');
    throw InputError(is_positional
                         ? "the " + words + " argument is empty (an unset shell variable?); expected a value"
                         : empty_option_text(name));
  }
}

// An option and the text typed for it at argv[i]: "--jobs 3", "--jobs=3", "-j 3", "-j3". `key` is
// as Boost's options_description::find_nothrow takes it ("jobs", or "-j"); nullopt where argv[i] is
// not an option followed by a value (the last word, a positional, "--").
struct TypedArgument {
  std::string key;
  std::string_view text;
};
inline std::optional<TypedArgument> typed_argument(int argc, const char* const* argv, int i) {
  const std::string_view word = argv[i];
  if (word.size() < 2 || word[0] != '-' || word == "--") return std::nullopt;
  if (word[1] != '-' && word.size() > 2) return TypedArgument{std::string(word.substr(0, 2)), word.substr(2)};
  const std::size_t eq = word[1] == '-' ? word.find('=') : std::string_view::npos;
  const std::string_view key = word.substr(0, eq);
  const std::string name(key.starts_with("--") ? key.substr(2) : key);
  if (eq != std::string_view::npos) return TypedArgument{name, word.substr(eq + 1)};
  if (i + 1 >= argc) return std::nullopt;  // no value at all: Boost says so
  return TypedArgument{name, argv[i + 1]};
}

// The same for an option of a typed value (a whole number, a factor): Boost refused `--jobs ""` itself,
// as "the argument for option '--jobs' is invalid" with exit 2, where `--out ""` said why with exit 1.
// Read from the words as typed, before Boost parses them.
inline void refuse_empty_arguments(int argc, const char* const* argv,
                                   const boost::program_options::options_description& options) {
  for (int i = 1; i < argc && std::string_view(argv[i]) != "--"; ++i) {  // after "--": positionals
    const std::optional<TypedArgument> argument = typed_argument(argc, argv, i);
    if (!argument || !argument->text.empty()) continue;
    const auto* option = options.find_nothrow(argument->key, false);
    if (option == nullptr || option->semantic()->max_tokens() == 0) continue;
    throw InputError(empty_option_text(option->long_name()));
  }
}

// The kind of number an option's value is read as by Boost (`--gpus`, `--step-factor`, `--route`'s
// list): "whole number", "natural" (unsigned) or "number"; nullopt for text (a size, a rate, a list
// of GPUs: parsed by the unit parsers, which say their own refusals) and switches.
inline std::optional<std::string_view> number_kind(const boost::program_options::option_description& option) {
  namespace po = boost::program_options;
  const auto* value = dynamic_cast<const po::typed_value_base*>(option.semantic().get());
  if (value == nullptr) return std::nullopt;
  const std::type_info& type = value->value_type();
  if (type == typeid(double) || type == typeid(float) || type == typeid(std::vector<double>)) return "number";
  if (type == typeid(unsigned) || type == typeid(unsigned long) || type == typeid(unsigned long long))
    return "natural";
  if (type == typeid(int) || type == typeid(long) || type == typeid(long long) ||
      type == typeid(std::vector<int>))
    return "whole number";
  return std::nullopt;
}

// A number option typed with a leading "+" (`plan --gpus +16`, `topology --nodes +2`,
// `collective --step-factor +2`): Boost's std::istream read it as 16, where a scenario key and every
// unit parser refuse it, saying the sign is why (sim::detail::leading_plus_reason). One check for every
// option of every command, read from the words as typed; a list's every value (`--route 0 +3`).
inline void refuse_signed_arguments(int argc, const char* const* argv,
                                    const boost::program_options::options_description& options) {
  for (int i = 1; i < argc && std::string_view(argv[i]) != "--"; ++i) {
    const std::optional<TypedArgument> argument = typed_argument(argc, argv, i);
    if (!argument) continue;
    const auto* option = options.find_nothrow(argument->key, false);
    const auto kind = option != nullptr ? number_kind(*option) : std::nullopt;
    if (!kind) continue;
    std::vector<std::string_view> texts{argument->text};
    const bool separate = i + 1 < argc && argument->text.data() == argv[i + 1];  // "--route 0 +3"
    if (separate && option->semantic()->max_tokens() > 1)
      for (int j = i + 2; j < argc && argv[j][0] != '-'; ++j) texts.emplace_back(argv[j]);
    const std::string_view said = *kind == "natural" ? "whole number" : *kind;
    for (const std::string_view text : texts)
      if (const auto plus = sim::detail::leading_plus_reason(text, said))
        throw InputError("--" + option->long_name() + " \"" + std::string(text) + "\": " + *plus);
  }
}

// An option of a typed value given text that is not one (`import --steps lots`): Boost said "the
// argument ('lots') for option '--steps' is invalid" with exit 2, neither why nor what is expected,
// where every other value's refusal says both with exit 1 (issue 31). The text as typed
// (typed_argument), and the kind of value the option takes.
inline std::string typed_value_refusal(int argc, const char* const* argv,
                                       const boost::program_options::options_description& options,
                                       const boost::program_options::option_description& option) {
  std::string_view typed;
  for (int i = 1; i < argc && std::string_view(argv[i]) != "--"; ++i)
    if (const std::optional<TypedArgument> argument = typed_argument(argc, argv, i))
      if (options.find_nothrow(argument->key, false) == &option) typed = argument->text;
  const auto kind = number_kind(option);
  return "--" + option.long_name() + " \"" + std::string(typed) + "\": expected " +
         (kind == "number"    ? "a number, such as 1.5"
          : kind == "natural" ? "a whole number, 0 or more"
                              : "a whole number");
}

// Boost's refusal of a typed option's text (po::store's invalid_option_value), said as above.
[[noreturn]] inline void refuse_typed_value(int argc, const char* const* argv,
                                            const boost::program_options::options_description& options,
                                            const boost::program_options::invalid_option_value& e) {
  std::string name = e.get_option_name();  // "--steps"
  name.erase(0, name.find_first_not_of('-'));
  const auto* option = options.find_nothrow(name, false);
  if (option == nullptr) throw e;
  throw InputError(typed_value_refusal(argc, argv, options, *option));
}

// An option that only means something beside another is refused without it, naming both:
//   refuse_without(vm, "min-forward", "correct", "--correct")  →  "--min-forward needs --correct" (import)
inline void refuse_without(const boost::program_options::variables_map& vm, const std::string& option,
                           const std::string& other, const std::string& other_words) {
  if (given(vm, option) && !given(vm, other)) throw InputError("--" + option + " needs " + other_words);
}

// A shorthand option that stands for one `--set` (--memory for cluster.gpu_memory) is added to the
// overrides, unless a --set already sets that field: the two would be silently resolved by order.
// `origin` records it as written, so that its refusals quote `--max-events lots`, not a --set the
// user never typed.
inline void add_shorthand(std::vector<std::string>& sets, scenarios::OverrideOrigin& origin,
                          const std::string& option, const std::string& path, const std::string& value) {
  if (value.empty()) return;
  for (std::size_t i = 0; i < sets.size(); ++i)
    if (sim::trim(std::string_view(sets[i]).substr(0, sets[i].find('='))) == path)
      throw InputError("--" + option + " " + value + " and " + origin.where(i, sets[i]) + " both set " +
                       path + "; expected one of them");
  origin.spelled.resize(sets.size());  // "": a --set, said as such
  origin.spelled.push_back("--" + option + " " + value);
  sets.push_back(path + "=" + value);
}

// Boost's default style takes an unambiguous prefix for the whole option: `topology --rings --gpus 0`
// was --gpus-per-node 0 (the preset's), printing the rings over all 8 GPUs. Options are spelled out.
inline constexpr int kOptionStyle =
    boost::program_options::command_line_style::default_style &
    ~boost::program_options::command_line_style::allow_guessing;

inline bool parse_options(int argc, const char* const* argv,
                          const boost::program_options::options_description& options,
                          const boost::program_options::positional_options_description& positional,
                          boost::program_options::variables_map& vm) {
  namespace po = boost::program_options;
  // Words past the last positional land in a hidden option, so the refusal can name them: Boost's own
  // says only "too many positional options" (`run a.yaml b.yaml`, or a shell pattern matching two files).
  constexpr const char* kExtra = "hybridsim-extra-words";
  po::positional_options_description all_positional = positional;
  po::options_description all_options;
  all_options.add(options);
  const unsigned taken = positional.max_total_count();
  if (taken != std::numeric_limits<unsigned>::max()) {
    all_positional.add(kExtra, -1);
    all_options.add_options()(kExtra, po::value<std::vector<std::string>>());
  }
  refuse_empty_arguments(argc, argv, options);
  refuse_signed_arguments(argc, argv, options);
  try {
    po::store(po::command_line_parser(argc, argv)
                  .options(all_options)
                  .positional(all_positional)
                  .style(kOptionStyle)
                  .run(),
              vm);
  } catch (const po::unknown_option& e) {
    // A slip in an option's name gets the option meant, as a scenario's unknown field does.
    std::vector<std::string> names;
    for (const auto& o : options.options())
      if (!o->long_name().empty()) names.push_back("--" + o->long_name());
    const std::string suggestion = yaml::did_you_mean(e.get_option_name(), names);
    if (suggestion.empty()) throw;
    throw po::error(e.what() + suggestion);
  } catch (const po::invalid_option_value& e) {
    refuse_typed_value(argc, argv, options, e);
  }
  if (vm.count(kExtra)) {
    const auto& extra = vm[kExtra].as<std::vector<std::string>>();
    std::string after;  // "after the scenario \"a.yaml\""
    for (unsigned i = 0; i < taken; ++i) {
      const std::string& name = positional.name_for_position(i);
      const auto* given = vm.count(name) != 0 ? boost::any_cast<std::string>(&vm[name].value()) : nullptr;
      if (given != nullptr) after = " after the " + name + " \"" + *given + "\"";
    }
    throw po::error("unexpected argument \"" + extra.front() + "\"" + after +
                    (extra.size() > 1 ? " (and " + std::to_string(extra.size() - 1) + " more)" : "") +
                    ": expected " + (taken == 0 ? "options only" : "one " + positional.name_for_position(0)) +
                    "; a shell pattern that matched several files, or a value without its option?");
  }
  if (vm.count("help")) {
    std::cout << options << "\n";
    return false;
  }
  refuse_empty_values(vm, options, positional);
  po::notify(vm);
  return true;
}

}  // namespace hybridsim::cli
