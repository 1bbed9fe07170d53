#!/usr/bin/env bash
# Records a pick in a third-party GTK 3 file chooser (zenity
# --file-selection: a tree view of folders and files): a double-click
# opening a folder, a click on a file, then OK. Replays it against
# folders that drifted. Runs inside dbus-run-session on $DISPLAY; writes,
# for each case NAME, what zenity printed (NAME.out: the chosen file), the
# replay's exit code (NAME.code), its messages (NAME.err) and its steps
# (NAME.stdout) into $OUT. Used by tests/trust.rs.
set -euo pipefail
: "${REPRISE:?}" "${SCRIPTS:?}" "${OUT:?}"
source "$(dirname "$0")/recording.sh"
source "$(dirname "$0")/zenity.sh"

# folders CASE FOLDER...: a fresh folder $OUT/CASE holding the named
# folders, each with the files notes.txt and plan.txt, all modified at one
# fixed time (the chooser shows it beside each name).
folders() {
  local root=$OUT/$1
  shift
  rm -rf "$root"
  mkdir -p "$root"
  for folder in "$@"; do
    mkdir -p "$root/$folder"
    echo "$folder notes" >"$root/$folder/notes.txt"
    echo "$folder plan" >"$root/$folder/plan.txt"
    touch -d "2026-01-02 03:04" "$root/$folder"/* "$root/$folder"
  done
}

# chooser CASE: the file chooser open on $OUT/CASE, printing the chosen
# file into $OUT/CASE.out.
chooser() {
  env ${LOOK:-} zenity --file-selection --title Open --filename "$OUT/$1/" \
    >"$OUT/$1.out" 2>/dev/null &
  zenity_pid=$!
  find_element "table cell" gamma >/dev/null
  sleep 0.5
}
finish() { ended "$zenity_pid" 3; }

# The recording: into "beta", then its plan.txt, then OK.
folders files alpha beta gamma
chooser files
start_recording files
xdotool mousemove $(find_element "table cell" beta) sleep 0.3 click --repeat 2 --delay 80 1
find_element "table cell" plan.txt >/dev/null
sleep 0.8
press $(find_element "table cell" plan.txt)
sleep 0.8
press $(find_element "push button" OK)
stop_recording
finish
"$REPRISE" show files >"$OUT/files.show"

# replay CASE FOLDER...: replays the pick against a folder holding FOLDERS.
replay() {
  local name=$1
  shift
  folders "$name" "$@"
  chooser "$name"
  replay_as "$name" files --json
  finish
}
pace replay alpha beta gamma
replay same alpha beta gamma
# Two folders above the one the person opened.
replay above aardvark abacus alpha beta gamma
# The folder gone.
replay gone alpha gamma
# Pixels alone (no tree): the presses on the rows' blank ends have nothing
# but their places' looks to go by. The same folders: made there. Two
# folders above: that place shows another row, and nothing is pressed.
RUNGS=visual replay pixels-same alpha beta gamma
RUNGS=visual replay pixels-above aardvark abacus alpha beta gamma
