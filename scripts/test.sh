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
# The test scaffolding (a loopback model server) is a feature, off in the
# binary people install.
test=(cargo test --workspace --locked --features reprise/test-support)
# Two lanes of integration tests on two cores, each one test at a time (each
# display test has its own display, bus and store): the fleet's tests, which
# mostly wait on leases, restarts and schedules, and the tests that inject
# nothing (the command line without a display, the model providers, the
# segmentation's measures), beside all the others. (The edited-program tests
# in this lane once missed a dialog's focus within its 5 s: tests that
# inject input stay in the other.) Cargo holds its build lock only while it
# checks the build, which is done.
lane=(fleet:: cli:: llm:: segment::)
lane_log=$(mktemp)
trap 'rm -f "$lane_log"' EXIT
"${test[@]}" --test integration -- --test-threads=1 "${lane[@]}" >"$lane_log" 2>&1 &
lane_pid=$!
status=0
"${test[@]}" --lib --bins -- --test-threads=1 || status=$?
"${test[@]}" --doc || status=$?
skips=()
for module in "${lane[@]}"; do skips+=(--skip "$module"); done
"${test[@]}" --test integration -- --test-threads=1 "${skips[@]}" || status=$?
wait "$lane_pid" || status=$?
echo "--- the second lane: ${lane[*]}"
cat "$lane_log"
exit "$status"
