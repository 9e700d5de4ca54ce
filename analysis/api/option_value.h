// An option's value parsed, its error naming the option (issue 31: a refusal says which option was
// wrong, not only the text): parse_option("--min-bytes", "lots", sim::parse_bytes) throws
// InputError `--min-bytes "lots": bad size "lots": expected ...`.
#pragma once
#include <string>

#include "sim/error.h"

namespace hybridsim::api {

template <typename Parse>
auto parse_option(const std::string& option, const std::string& text, Parse parse) -> decltype(parse(text)) {
  try {
    return parse(text);
  } catch (const InputError& e) {
    throw InputError(option + " \"" + text + "\": " + e.what());
  }
}

}  // namespace hybridsim::api
