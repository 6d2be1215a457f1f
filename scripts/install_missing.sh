#!/usr/bin/env bash
# Install the system tools that are missing, with this distribution's package manager (the
# table is ge/host.py's):   scripts/install_missing.sh cc:gcc cmake:cmake ...
# Each argument is <command>:<package>; the package is installed when the command is not found.
set -euo pipefail
repo="$(cd "$(dirname -- "$0")/.." && pwd)"
need=()
for pair in "$@"; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || need+=("${pair#*:}")
done
[ ${#need[@]} -eq 0 ] && exit 0
install=$(PYTHONPATH="$repo" "${PYTHON:-python3}" -m ge.host install "${need[@]}")
case "$install" in *" or "*) echo "please install ${need[*]}: $install" >&2; exit 1 ;; esac
sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
echo "installing ${need[*]}: $sudo_cmd $install"
case "$install" in apt-get*) $sudo_cmd apt-get update -q || true ;; esac
$sudo_cmd $install
