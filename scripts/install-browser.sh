#!/usr/bin/env bash
# Install Debian's Chromium for the browser tests (tests/browser/). Playwright's own browser download
# cannot work on these machines, so the tests drive /usr/bin/chromium through `executable_path`.
# Idempotent and non-interactive (CI=true, no stdin, run as root or with passwordless sudo).
# Usage: bash scripts/install-browser.sh
set -euo pipefail

CHROMIUM=/usr/bin/chromium

if [ -x "$CHROMIUM" ] && "$CHROMIUM" --version >/dev/null 2>&1; then
  echo "install-browser: $("$CHROMIUM" --version) already installed"
  exit 0
fi

# shellcheck source=scripts/_apt.sh
. "$(dirname "$0")/_apt.sh"
if ! apt_privileges; then
  echo "install-browser: ERROR: cannot install Debian's chromium package: $APT_WHY; run as root" >&2
  exit 1
fi

echo "install-browser: installing Debian's chromium package"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq </dev/null
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends chromium </dev/null

if ! "$CHROMIUM" --version; then
  echo "install-browser: ERROR: apt-get finished but $CHROMIUM --version fails" >&2
  exit 1
fi
