#!/usr/bin/env bash
# Records a save in FeatherPad (a third-party Qt 5 editor), then replays it
# with --launch twice: with no FeatherPad open (Reprise starts it with the
# command line it recorded, the file is saved, and Reprise ends it), then
# with one open (nothing is started, and the open one is left running).
# Runs inside dbus-run-session on $DISPLAY; writes into $OUT the saved files
# (recorded.txt, launched.txt, open.txt), each replay's exit code and
# messages (CASE.code, CASE.err), the FeatherPad processes left after the
# first replay (left.txt), the started editor's environment
# (launched-env.txt) and whether the open editor outlived the second
# (alive.txt).
set -euo pipefail
: "${REPRISE:?}" "${SCRIPTS:?}" "${OUT:?}"
source "$(dirname "$0")/recording.sh"
source "$(dirname "$0")/featherpad.sh"

mkdir -p "$OUT/Saved Notes"
saved="$OUT/Saved Notes/recorded.txt"
editor 60 60
start_recording launch
press $(find_element text "")
xdotool type --delay 60 "hello launch"
sleep 0.5
press $(find_element "push button" Save)
sleep 1.5
xdotool type --delay 60 "$saved"
xdotool key Return
stop_recording
finish
mv "$saved" "$OUT/recorded.txt"

# No FeatherPad open: --launch starts one (with a fresh configuration, as
# the recorded one had).
rm -rf "$XDG_CONFIG_HOME"
# (What the started editor inherits is kept: no credential of Reprise's.)
(for _ in $(seq 300); do
  pid=$(pgrep -nx featherpad) && tr '\0' '\n' </proc/"$pid"/environ >"$OUT/launched-env.txt" && break
  sleep 0.1
done) &
watcher=$!
REPRISE_SECRET_LEAKCHECK=leak-value ANTHROPIC_API_KEY=sk-leak-value \
  replay_as launched launch --launch
wait "$watcher" || true
sleep 0.5
pgrep -x featherpad >"$OUT/left.txt" || true
if [[ -e "$saved" ]]; then mv "$saved" "$OUT/launched.txt"; fi

# One open: nothing is started, and it is not ended.
editor 300 150
replay_as open launch --launch
if kill -0 "$editor_pid" 2>/dev/null; then echo yes >"$OUT/alive.txt"; else echo no >"$OUT/alive.txt"; fi
finish
if [[ -e "$saved" ]]; then mv "$saved" "$OUT/open.txt"; fi
