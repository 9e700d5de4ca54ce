#!/usr/bin/env bash
# The browser test (speedscope_test.mjs), or a skip (exit 77, which CTest reports as skipped) where
# its tools are not installed: `third_party/install-deps --browser` installs them. With
# HYBRIDSIM_BROWSER_TEST_REQUIRED=1 (.ci/run sets it) a missing tool is a failure instead.
# Usage: tests/browser/run.sh REPO_ROOT TRACES_DIR
set -euo pipefail
root="$1"
traces="$2"
modules="$root/third_party/browser/node_modules"
missing=""
command -v node > /dev/null || missing+=" node"
[ -x "${HYBRIDSIM_CHROMIUM:-/usr/bin/chromium}" ] || missing+=" chromium"
[ -f "$modules/playwright-core/package.json" ] || missing+=" playwright-core"
[ -f "$modules/speedscope/package.json" ] || missing+=" speedscope"
if [ -n "$missing" ]; then
  echo "browser test: not installed:$missing (third_party/install-deps --browser installs them)"
  if [ "${HYBRIDSIM_BROWSER_TEST_REQUIRED:-0}" = 1 ]; then exit 1; fi
  exit 77
fi
exec node "$root/tests/browser/speedscope_test.mjs" "$root" "$traces"
