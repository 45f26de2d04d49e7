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

if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  SUDO=(sudo -n)
else
  echo "install-browser: ERROR: installing chromium needs root (or passwordless sudo); run as root" >&2
  exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-browser: ERROR: no apt-get here; install Debian's chromium package some other way" >&2
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
