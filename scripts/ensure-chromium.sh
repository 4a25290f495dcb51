#!/usr/bin/env bash
# Make sure Debian's chromium is installed, for the dashboard's headless rendering test.
# Installs it with apt-get when we are root and apt-get exists; otherwise says why it did
# nothing and exits 0 (the chromium tests then skip with a clear reason).
set -u

CHROMIUM=${CHROMIUM:-/usr/bin/chromium}

if [ -x "$CHROMIUM" ]; then
    echo "ensure-chromium: $CHROMIUM is already installed ($("$CHROMIUM" --version 2>/dev/null || echo 'version unknown'))"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "ensure-chromium: $CHROMIUM is missing and we are not root; install it with 'apt-get install chromium' (chromium tests will be skipped)"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-chromium: $CHROMIUM is missing and apt-get is not available; install chromium by hand (chromium tests will be skipped)"
    exit 0
fi

echo "ensure-chromium: installing chromium with apt-get"
export DEBIAN_FRONTEND=noninteractive
if apt-get update -qq && apt-get install -y -qq chromium; then
    if [ -x "$CHROMIUM" ]; then
        echo "ensure-chromium: installed $("$CHROMIUM" --version 2>/dev/null || echo chromium)"
    else
        echo "ensure-chromium: apt-get finished but $CHROMIUM is still missing (chromium tests will be skipped)"
    fi
else
    echo "ensure-chromium: apt-get failed; chromium tests will be skipped"
fi
exit 0
