#!/usr/bin/env bash
# Make sure Debian's PostgreSQL server binaries are installed, for the tests that run the Dagster
# instance on PostgreSQL (tests/test_dagster_postgres.py). The tests start their own
# throwaway cluster (initdb + pg_ctl in a temporary folder, loopback port, unprivileged user) and
# stop it when they end, so nothing is left running; this script only installs the binaries.
# Installs them with apt-get when we are root and apt-get exists; otherwise says why it did
# nothing and exits 0 (the PostgreSQL tests then skip with a clear reason).
set -u

find_initdb() {
    ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n 1
}

INITDB=$(find_initdb)
if [ -n "$INITDB" ]; then
    echo "ensure-postgres: $INITDB is already installed ($("$INITDB" --version 2>/dev/null || echo 'version unknown'))"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "ensure-postgres: PostgreSQL is missing and we are not root; install it with 'apt-get install postgresql' (PostgreSQL tests will be skipped)"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-postgres: PostgreSQL is missing and apt-get is not available; install it by hand (PostgreSQL tests will be skipped)"
    exit 0
fi

echo "ensure-postgres: installing postgresql with apt-get"
export DEBIAN_FRONTEND=noninteractive
# policy-rc.d 101: the package must not start its own cluster on port 5432; the tests start theirs.
POLICY=/usr/sbin/policy-rc.d
if [ ! -e "$POLICY" ]; then
    printf '#!/bin/sh\nexit 101\n' > "$POLICY" && chmod +x "$POLICY" && CREATED_POLICY=1
fi
if apt-get update -qq && apt-get install -y -qq postgresql; then
    INITDB=$(find_initdb)
    if [ -n "$INITDB" ]; then
        echo "ensure-postgres: installed $("$INITDB" --version 2>/dev/null || echo postgresql)"
    else
        echo "ensure-postgres: apt-get finished but no initdb under /usr/lib/postgresql (PostgreSQL tests will be skipped)"
    fi
else
    echo "ensure-postgres: apt-get failed; PostgreSQL tests will be skipped"
fi
[ "${CREATED_POLICY:-0}" = 1 ] && rm -f "$POLICY"
exit 0
