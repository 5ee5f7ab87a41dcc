#!/usr/bin/env bash
# Installs Debian's Chromium for the web page's browser test
# (go test ./service -run TestBrowser), as root. With --fonts it also
# installs CJK fonts, so that screenshots show Chinese text rather than
# boxes (needed to regenerate docs/service.png, not for the test).
#   scripts/install-chromium.sh [--fonts]
set -euo pipefail
pkgs=()
command -v chromium >/dev/null 2>&1 || pkgs+=(chromium)
if [ "${1:-}" = --fonts ] && ! fc-list 2>/dev/null | grep -qi 'CJK'; then
  pkgs+=(fonts-noto-cjk)
fi
if [ ${#pkgs[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${pkgs[@]}" >/dev/null
fi
chromium --version 2>/dev/null
