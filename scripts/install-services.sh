#!/usr/bin/env bash
# Install Debian's redis-server and haproxy for the past-one-machine tests (tests/scale/). The tests start
# their own redis-server and haproxy on free 127.0.0.1 ports (temp dirs, stopped by PID); nothing here
# starts a service. Idempotent and non-interactive (CI=true, no stdin, run as root or passwordless sudo).
# Where apt is impossible it says so and exits 0: the tests that need these programs then skip, naming why.
# Usage: bash scripts/install-services.sh
set -euo pipefail

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || missing+=(haproxy)
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-services: redis-server and haproxy already installed"
  exit 0
fi

# shellcheck source=scripts/_apt.sh
. "$(dirname "$0")/_apt.sh"
if ! apt_privileges; then
  echo "install-services: SKIP: cannot install ${missing[*]}: $APT_WHY; tests/scale will skip" >&2
  exit 0
fi

echo "install-services: installing Debian's ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# policy-rc.d 101: the packages' postinst must not start system-wide daemons (the tests start their own)
policy=/usr/sbin/policy-rc.d
made_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | "${SUDO[@]}" tee "$policy" >/dev/null
  "${SUDO[@]}" chmod 755 "$policy"
  made_policy=1
fi
status=0
{ "${SUDO[@]}" apt-get update -qq </dev/null &&
  "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null; } || status=$?
if [ "$made_policy" -eq 1 ]; then
  "${SUDO[@]}" rm -f "$policy"
fi
if [ "$status" -ne 0 ]; then
  echo "install-services: SKIP: apt-get could not install ${missing[*]} (exit $status); tests/scale will skip" >&2
  exit 0
fi
redis-server --version
/usr/sbin/haproxy -v | head -1
