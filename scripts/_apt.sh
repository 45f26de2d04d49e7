# Sourced by the install-*.sh scripts: can this machine run Debian's apt-get non-interactively?
# apt_privileges: sets the array SUDO (empty as root, `sudo -n` with passwordless sudo) and returns 0;
# otherwise prints why not in APT_WHY and returns 1. The caller decides whether that is an error or a skip.
apt_privileges() {
  SUDO=()
  APT_WHY=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      SUDO=(sudo -n)
    else
      APT_WHY="it needs root (or passwordless sudo)"
      return 1
    fi
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    APT_WHY="there is no apt-get here"
    return 1
  fi
}
