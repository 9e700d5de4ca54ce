// Errors that carry where and what: every bad input becomes an InputError whose message names the
// offending text and what was expected. Caught once, in the CLI, which prints it and exits non-zero.
#pragma once
#include <stdexcept>
#include <string>

namespace hybridsim {

// Bad input from a user: a unit string, a YAML field, a command-line value.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& what) : std::runtime_error(what) {}
};

// A broken invariant inside the simulator (a bug, not bad input).
class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& what) : std::logic_error(what) {}
};

}  // namespace hybridsim
