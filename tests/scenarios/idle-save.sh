#!/usr/bin/env bash
# A Tk editor, whose windows expose no accessibility tree at all: IDLE,
# Python's own editor (Debian's idle, on Tk 8.6). Records a click into an
# empty file's text, `print("hello tk")` typed and Ctrl+S (the file is
# named, so no dialog asks where); replays it on a fresh editor of an
# empty file of the same name: moved, in IDLE's dark theme, with a larger
# font, and resized. Judged by the file each saved (CASE.py), with each
# replay's exit code and messages (CASE.code, CASE.err). Runs inside
# dbus-run-session on $DISPLAY.
set -euo pipefail
: "${REPRISE:?}" "${OUT:?}"
source "$(dirname "$0")/recording.sh"

accessibility_bus

# IDLE edits $work/hello.py: one name, so its window's title is the same
# in every case; each case's file is kept as $OUT/CASE.py once saved.
work=$OUT/idle-work
mkdir -p "$work"

# idle CASE X Y [W H]: a fresh IDLE (its settings in a home of its own, the
# lines of LOOK added to its config-main.cfg) editing an empty hello.py,
# its window at X, Y (and W x H pixels). Sets `idle_pid`.
idle() {
  local home=$OUT/home-$1
  rm -rf "$home" "$work/hello.py"
  mkdir -p "$home/.idlerc"
  printf '%b' "${LOOK:-}" >"$home/.idlerc/config-main.cfg"
  HOME=$home /usr/bin/idle -e "$work/hello.py" >/dev/null 2>&1 &
  idle_pid=$!
  place_window name "^hello.py - " "${@:2}"
  sleep 0.5
  xdotool windowactivate --sync "$window" 2>/dev/null || true
}

# done_with CASE: the editor ended, its file kept as $OUT/CASE.py.
done_with() {
  sleep 0.5
  [[ -f $work/hello.py ]] && cp "$work/hello.py" "$OUT/$1.py"
  kill "$idle_pid" 2>/dev/null || true
  wait "$idle_pid" 2>/dev/null || true
}

idle recorded 120 90
start_recording idle
# Into the text, a line below its top: the editor's first line.
linger $((X + 200)) $((Y + 60))
sleep 0.5
xdotool type --delay 80 'print("hello tk")'
sleep 0.7
xdotool key ctrl+s
stop_recording
done_with recorded

idle moved 420 260
replay_as moved idle
done_with moved

LOOK='[Theme]\ndefault= 1\nname= IDLE Dark\nname2= IDLE Dark\n' idle dark 200 150
replay_as dark idle
done_with dark

LOOK='[EditorWindow]\nfont= DejaVu Sans Mono\nfont-size= 16\n' idle font 120 90
replay_as font idle
done_with font

idle resized 160 120 900 520
replay_as resized idle
done_with resized
