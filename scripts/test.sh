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
# test does not build another package's binary for the root's tests), in
# the same build as every test target: one feature resolution for the whole
# workspace, so no dependency is compiled twice (`-p reprise-fixture` alone
# resolved other features and compiled 113 crates again, the fixture's GUI
# stack among them) and `cargo test` below compiles nothing.
cargo build --workspace --all-targets --locked --features reprise/test-support
# One test at a time on CI's two cores. (The display tests can run in
# parallel: each has its own display. The flakes that made this serial were
# windows mapped before openbox was ready, fixed in the harness.)
# The test scaffolding (a loopback model server) is a feature, off in the
# binary people install.
cargo test --workspace --locked --features reprise/test-support -- --test-threads=1
