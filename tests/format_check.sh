#!/usr/bin/env bash
# The formatting check of .ci/run: fails on any line of the project's C++ sources (every tracked
# .cpp and .h outside third_party/) longer than .clang-format's ColumnLimit, counted in characters
# as clang-format counts columns; and, given a base revision (BASE, or HYBRIDSIM_FORMAT_BASE), on
# any line changed since BASE that `clang-format --dry-run -Werror` would reformat.
#
# Usage: tests/format_check.sh [BASE]        (from anywhere inside the repository)
#
# To fix the long lines it reports, let clang-format (14, .clang-format's) rewrap just those lines
# (and the statements they belong to), from the repository root:
#
#   tests/format_check.sh --fix
#
# which runs, for each file with long lines, `clang-format -i --lines=N:N ... FILE`. Lines it cannot
# shorten (a raw string literal, say) are left for a hand edit and reported by the next check.
set -euo pipefail
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"

limit=$(sed -n 's/^ColumnLimit: *\([0-9]*\).*/\1/p' .clang-format)
[ -n "$limit" ] || { echo "format_check: no ColumnLimit in .clang-format" >&2; exit 2; }

# file:line for every line over the limit (characters, not bytes: the sources hold UTF-8 arrows).
long_lines() {
  # grep exits 1 when no line is too long (and xargs then 123): that is the good case, not an error.
  { git ls-files -z -- '*.cpp' '*.h' ':!third_party/' |
      LC_ALL=C.UTF-8 xargs -0 grep -nHE "^.{$((limit + 1)),}" || true; } | cut -d: -f1,2
}

need_clang_format() {
  command -v clang-format > /dev/null ||
    { echo "format_check: clang-format is not installed (Debian: apt-get install clang-format)" >&2; exit 2; }
}

if [ "${1:-}" = "--fix" ]; then
  need_clang_format
  long_lines | awk -F: '
    $1 != file { if (file != "") print args " " file; file = $1; args = "" }
    { args = args " --lines=" $2 ":" $2 }
    END { if (file != "") print args " " file }' |
    while read -r line; do
      # shellcheck disable=SC2086  # the --lines options and the file name, split on purpose
      clang-format -i $line
    done
  exit 0
fi

status=0
found=$(long_lines)
if [ -n "$found" ]; then
  echo "$found" | sed 's/$/: over the column limit/'
  echo "format_check: $(echo "$found" | wc -l) lines over the column limit of $limit (tests/format_check.sh --fix rewraps them)"
  status=1
fi

base=${1:-${HYBRIDSIM_FORMAT_BASE:-}}
if [ -n "$base" ]; then
  need_clang_format
  # The lines each changed file gained since BASE, as clang-format --lines ranges.
  while read -r file; do
    [ -f "$file" ] || continue
    ranges=$(git diff -U0 --no-color "$base" -- "$file" |
      sed -n 's/^@@ [^+]*+\([0-9]*\)\(,\([0-9]*\)\)\? @@.*/\1 \3/p' |
      awk '{ n = ($2 == "") ? 1 : $2; if (n > 0) printf " --lines=%d:%d", $1, $1 + n - 1 }')
    [ -n "$ranges" ] || continue
    # shellcheck disable=SC2086
    if ! report=$(clang-format --dry-run -Werror $ranges "$file" 2>&1); then
      echo "$report" | head -n 20
      echo "format_check: $file: changed lines are not as clang-format writes them (clang-format -i$ranges $file)"
      status=1
    fi
  done < <(git diff --name-only --diff-filter=AM "$base" -- '*.cpp' '*.h' ':!third_party/')
fi
exit $status
