# Sourced by the setup and test scripts: one place for the build's environment and the apt helper.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/cache/funes_py/target}"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"
export CARGO_INCREMENTAL=0
PY="${PYTHON:-python3}"
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"

# apt_install PKG...: installs the Debian packages that are missing (one apt-get update, only when needed).
apt_install() {
  local missing=() pkg
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  if [ ${#missing[@]} -gt 0 ]; then
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  fi
}
