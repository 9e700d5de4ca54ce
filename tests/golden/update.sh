#!/usr/bin/env bash
# Rewrites every golden of tests/golden/ (each shipped scenario's printed table and files, the CI
# study's report; tests/golden/check.sh says which) from what the build's hybridsim produces now,
# by running the `golden` tests of BUILD_DIR in update mode, after removing the old ones so that
# none is left for a scenario that is gone. Review `git diff tests/golden` (and the READMEs that
# quote the numbers) before committing.
#
# Usage: tests/golden/update.sh BUILD_DIR      (a configured and built build folder)
set -euo pipefail
build=${1:?usage: tests/golden/update.sh BUILD_DIR}
golden=$(cd "$(dirname "$0")" && pwd)
cmake --build "$build" --target hybridsim
find "$golden" -mindepth 1 -type f ! -name '*.sh' ! -name shipped.txt -delete
find "$golden" -mindepth 1 -type d -empty -delete
HYBRIDSIM_GOLDEN_UPDATE=1 ctest --test-dir "$build" -L '^golden$' -j2 --output-on-failure
echo "rewrote the goldens under $golden; review git diff before committing"
