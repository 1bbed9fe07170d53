#!/usr/bin/env bash
# Installs what is needed and runs every test. The display tests start their
# own Xvfb, so no display is needed (and none is used if one is set).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-debian.sh
unset WAYLAND_DISPLAY XDG_SESSION_TYPE
# Tesseract is several times faster on two cores with one OpenMP thread.
export OMP_THREAD_LIMIT=1
# The display tests drive the fixture application: build it first (cargo
# test does not build another package's binary for the root's tests).
cargo build --locked -p reprise-fixture
# One test at a time: under two-at-a-time runs on two cores, waits for
# xcalc's and xterm's windows have timed out now and then (cause not found yet).
cargo test --workspace --locked -- --test-threads=1
