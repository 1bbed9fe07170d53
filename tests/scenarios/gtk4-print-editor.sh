#!/usr/bin/env bash
# A second GTK 4 application (gtk4-print-editor, Debian's gtk-4-examples),
# whose accessibility boxes are relative to its window's surface under X11:
# a person clicks into its text, types "hello gtk4", marks the text as the
# outcome (the mark key, the pointer on it), saves with Ctrl+S and types the
# file's path into GTK 4's file chooser. Replayed on the window moved
# (moved), in the dark theme (dark), at scale 2 (scaled), resized
# (resized), and on an editor that already holds a draft (drafted: the
# outcome check must halt the run before the save). Runs inside
# dbus-run-session on $DISPLAY; writes each case's saved file (CASE.txt,
# absent when nothing was saved), exit code (CASE.code), messages
# (CASE.err) and steps (CASE.stdout), and the recorder's messages
# (recorded.err) into $OUT.
set -euo pipefail
: "${REPRISE:?}" "${SCRIPTS:?}" "${OUT:?}"
source "$(dirname "$0")/recording.sh"

accessibility_bus
mkdir -p "$OUT/Saved"

# editor X Y WIDTH HEIGHT [ENV...]: a fresh editor, its window at X, Y and
# WIDTH x HEIGHT. Sets `editor_pid` and `origin` (where its surface's
# content starts: GTK 4 keeps a 5-pixel margin inside its X window under
# openbox, measured).
editor() {
  env "${@:5}" gtk4-print-editor >/dev/null 2>>"$OUT/editor.err" &
  editor_pid=$!
  place_window class print-editor "$1" "$2" "$3" "$4"
  origin="$((X + 5)) $((Y + 5))"
}
find_element() { SURFACE_ORIGIN="$origin" "$SCRIPTS/a11y-find.py" gtk4-print-editor "$@"; }

# done_with CASE: the editor ended, the file it saved (if any) kept as
# CASE.txt.
done_with() {
  sleep 1
  kill "$editor_pid" 2>/dev/null || true
  wait "$editor_pid" 2>/dev/null || true
  if [[ -e "$OUT/Saved/file.txt" ]]; then
    mv "$OUT/Saved/file.txt" "$OUT/$1.txt"
  fi
}

editor 150 120 420 500
start_recording save
press $(find_element text GtkTextView)
sleep 0.5
xdotool type --delay 80 "hello gtk4"
sleep 0.5
xdotool key Scroll_Lock
sleep 1
xdotool key ctrl+s
sleep 2
xdotool type --delay 60 "$OUT/Saved/file.txt"
sleep 0.5
xdotool key Return
stop_recording
done_with recorded
cp "$OUT/record.err" "$OUT/recorded.err"

for case in moved:"500 300 420 500" dark:"500 300 420 500 GTK_THEME=Adwaita:dark" \
  scaled:"200 100 420 500 GDK_SCALE=2" resized:"300 200 560 380"; do
  editor ${case#*:}
  replay_as "${case%%:*}" save --json
  done_with "${case%%:*}"
done

# A draft already in the editor: the typing lands after it, and every
# step's own check passes (the text holds what was typed); the outcome
# check halts the run before the save.
editor 500 300 420 500
press $(find_element text GtkTextView)
xdotool type --delay 60 "draft "
replay_as drafted save --json
done_with drafted
