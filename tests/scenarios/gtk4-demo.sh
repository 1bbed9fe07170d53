#!/usr/bin/env bash
# GTK 4 under X11 gives its accessibility boxes relative to its window's
# surface, not the screen. Records, on gtk4-demo (Debian's gtk-4-examples)
# whose window is not at the screen's origin, a press on the demo
# "Application Class" in its sidebar, then on its notebook's "Source" tab;
# replays it with the window moved, and with the dark theme. Then records
# the same presses with the tree's boxes skewed by a row (as a wrong mapping
# of a toolkit's coordinates would leave them: built for tests only) and
# replays that where it was made (the `skewed` case), then moved with the
# tree still skewed (`skewed-still`; the recorder's words in
# $OUT/skewed.record.err); last, the first recording with the tree skewed
# at replay only (`live-skewed`). Runs inside
# dbus-run-session on $DISPLAY; writes what the application shows after each
# case (CASE.shows: its window's title, then the selected tab's label, read
# from its own accessibility tree) and each replay's exit code and messages
# (CASE.code, CASE.err, CASE.stdout).
set -euo pipefail
: "${REPRISE:?}" "${SCRIPTS:?}" "${OUT:?}"
source "$(dirname "$0")/recording.sh"

accessibility_bus

# demo X Y [ENV...]: gtk4-demo with its window at X, Y. Sets `demo` (its
# pid) and `origin` (where its surface's content starts: GTK 4 keeps a
# 5-pixel margin inside its X window under openbox, measured).
demo() {
  env "${@:3}" gtk4-demo >/dev/null 2>&1 &
  demo=$!
  place_window name "^GTK Demo$" "$1" "$2"
  origin="$((X + 5)) $((Y + 5))"
}

find_element() { SURFACE_ORIGIN="$origin" "$SCRIPTS/a11y-find.py" gtk4-demo "$@"; }

# shows CASE: the window's title and the selected tab's label.
shows() {
  /usr/bin/python3 - >"$OUT/$1.shows" <<'PY'
import pyatspi
def walk(node, depth=0):
    if depth > 40:
        return
    for child in node:
        if child.getRoleName() == "page tab" and child.getState().contains(pyatspi.STATE_SELECTED):
            print("tab", " ".join(c.name for c in child if c.name))
        walk(child, depth + 1)
for app in pyatspi.Registry.getDesktop(0):
    if app is not None and app.name == "gtk4-demo":
        for frame in app:
            if frame.getState().contains(pyatspi.STATE_ACTIVE):
                print("window", frame.name)
                walk(frame)
PY
}

demo 150 120
start_recording demo
linger $(find_element label "Application Class")
sleep 1
linger $(find_element label Source)
stop_recording
shows recorded
kill "$demo"; wait "$demo" 2>/dev/null || true

demo 330 60
replay_as moved demo
shows moved
kill "$demo"; wait "$demo" 2>/dev/null || true

demo 40 150 GTK_THEME=Adwaita:dark
replay_as dark demo
shows dark
kill "$demo"; wait "$demo" 2>/dev/null || true

# Skewed by a row (38 pixels): the tree names, for each press, the row above
# the one pressed.
demo 150 120
REPRISE_TEST_TREE_SKEW=0,38 start_recording skewed
linger $(find_element label "Application Class")
sleep 1
linger $(find_element label Source)
stop_recording
cp "$OUT/record.err" "$OUT/skewed.record.err"
kill "$demo"; wait "$demo" 2>/dev/null || true

demo 150 120
replay_as skewed skewed
shows skewed
kill "$demo"; wait "$demo" 2>/dev/null || true

# The same recording replayed with the tree still skewed, the window moved:
# the offset fitted while recording is found again in the pixels.
demo 330 60
REPRISE_TEST_TREE_SKEW=0,38 replay_as skewed-still skewed --json
shows skewed-still
kill "$demo"; wait "$demo" 2>/dev/null || true

# The truthful recording replayed with the tree skewed (the `live-skewed`
# case): the tree's row and the pixels' disagree.
demo 330 60
REPRISE_TEST_TREE_SKEW=0,38 replay_as live-skewed demo
shows live-skewed
kill "$demo"; wait "$demo" 2>/dev/null || true
