#!/usr/bin/env bash
# Install every Debian package listed in deps/debian-packages.txt that is not
# installed yet. Quick (one dpkg-query) when everything is already there.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
mapfile -t want < <(grep -v '^\s*#' "$here/deps/debian-packages.txt" | awk 'NF{print $1}')
missing=()
for p in "${want[@]}"; do
    st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [ "$st" = "installed" ] || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "setup: all ${#want[@]} packages already installed"
    exit 0
fi
echo "setup: installing ${missing[*]}"
sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
export DEBIAN_FRONTEND=noninteractive
# The boinc-client package would start a system-wide client; we never want
# that one (tests run their own in private directories).
if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | $sudo_cmd tee /usr/sbin/policy-rc.d >/dev/null
    $sudo_cmd chmod +x /usr/sbin/policy-rc.d
    trap '$sudo_cmd rm -f /usr/sbin/policy-rc.d' EXIT
fi
$sudo_cmd apt-get update -q || true
$sudo_cmd apt-get install -y -q --no-install-recommends "${missing[@]}"
