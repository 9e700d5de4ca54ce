// Decoding Kineto's values: exact microseconds, trailing ids, dtype sizes.
#include "workloads/import_kineto_values.h"

#include <cctype>
#include <cmath>

#include "workloads/import_kineto_trace.h"
#include "sim/text.h"

namespace hybridsim::workloads {

namespace kineto_detail {


Wide micros_to_ps(const std::string& token, double value) {
  std::size_t i = 0;
  const bool negative = !token.empty() && token[0] == '-';
  if (negative || (!token.empty() && token[0] == '+')) ++i;
  Wide whole = 0;
  for (; i < token.size() && std::isdigit(static_cast<unsigned char>(token[i])); ++i)
    whole = whole * 10 + (token[i] - '0');
  Wide frac = 0;
  int digits = 0;
  if (i < token.size() && token[i] == '.') {
    for (++i; i < token.size() && std::isdigit(static_cast<unsigned char>(token[i])); ++i) {
      if (digits < 6) {
        frac = frac * 10 + (token[i] - '0');
        ++digits;
      }
    }
  }
  if (i != token.size()) return static_cast<Wide>(std::llround(value * 1e6));
  for (; digits < 6; ++digits) frac *= 10;
  const Wide ps = whole * kPsPerUs + frac;
  return negative ? -ps : ps;
}

std::optional<std::int64_t> trailing_integer(std::string_view text) {
  std::size_t begin = text.size();
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(text[begin - 1]))) --begin;
  if (begin == text.size()) return std::nullopt;
  std::int64_t v = 0;
  for (std::size_t i = begin; i < text.size() && i < begin + 18; ++i) v = v * 10 + (text[i] - '0');
  return v;
}

int count_group_ranks(std::string_view ranks) {
  int count = 0;
  bool in_number = false;
  for (const char c : ranks) {
    const bool digit = std::isdigit(static_cast<unsigned char>(c)) != 0;
    if (digit && !in_number) ++count;
    in_number = digit;
  }
  return count;
}

std::string describe_group(const std::string& name, const std::string& ranks) {
  if (name.empty()) return ranks;
  return "process group " + name + (ranks.empty() ? "" : " " + ranks);
}

}  // namespace kineto_detail

std::optional<int> kineto_dtype_bytes(std::string_view dtype) {
  std::string d = sim::lowercase(dtype);
  if (d.starts_with("c10::")) d = d.substr(5);
  if (d.starts_with("torch.")) d = d.substr(6);
  if (d == "float" || d == "float32") return 4;
  if (d == "half" || d == "float16" || d == "bfloat16") return 2;
  if (d == "double" || d == "float64") return 8;
  if (d == "int" || d == "int32") return 4;
  if (d == "long" || d == "long int" || d == "int64") return 8;
  if (d == "short" || d == "int16") return 2;
  if (d == "byte" || d == "char" || d == "bool" || d == "uint8" || d == "int8" ||
      d == "unsigned char" || d == "signed char")
    return 1;
  return std::nullopt;
}

}  // namespace hybridsim::workloads
