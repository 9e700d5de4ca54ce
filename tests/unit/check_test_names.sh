#!/usr/bin/env bash
# CTest's discovery of doctest cases (doctest_discover_tests) reads each case's name as a CMake list
# item: a name with a semicolon is cut there, the cut name matches no case, and CTest passes a test
# that never ran (28 cases did so until 2026-12-03, one of them failing). This check fails on any
# such name in the given test binaries.
#   Usage: tests/unit/check_test_names.sh BINARY...
set -euo pipefail
status=0
for binary in "$@"; do
  if bad=$("$binary" --list-test-cases --no-version | grep ';'); then
    echo "$binary: test case names with a semicolon (CTest would never run them):" >&2
    echo "$bad" >&2
    status=1
  fi
done
exit $status
