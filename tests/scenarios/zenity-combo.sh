#!/usr/bin/env bash
# Records a choice in a third-party GTK form's combo box (zenity --forms):
# a press on the combo box opens its popup (an override-redirect window of
# its own), a press on "Bergen" in it, then OK. Replays it against forms
# whose choices drifted (and with DRIFTS set, whose look did: the dark
# theme, twice the scale, larger fonts). Runs inside dbus-run-session on
# $DISPLAY; writes,
# for each case NAME, what zenity printed (NAME.out), the replay's exit code
# (NAME.code) and its messages (NAME.err) into $OUT. STRATEGY and RUNGS
# choose the replay strategy and ladder.
set -euo pipefail
: "${REPRISE:?}" "${SCRIPTS:?}" "${OUT:?}"
source "$(dirname "$0")/recording.sh"
source "$(dirname "$0")/zenity.sh"

# form NAME CHOICES [X Y]: a form with a City combo box of CHOICES
# ("Oslo|Bergen"), printing the choice into $OUT/NAME.out; its window moved
# to X Y when given.
form() {
  env ${LOOK:-} zenity --forms --title Trip --text "Where to" --add-combo City \
    --combo-values "$2" >"$OUT/$1.out" 2>/dev/null &
  zenity_pid=$!
  find_element "push button" OK >/dev/null
  if [[ -n ${3:-} ]]; then
    xdotool windowmove "$(xdotool search --sync --onlyvisible --name '^Trip$' | head -1)" "$3" "$4"
    sleep 0.5
  fi
}

finish() { ended "$zenity_pid" 3; }

form recorded "Oslo|Bergen|Tromsø"
start_recording trip
press $(find_element "combo box" "")
sleep 0.8
# At a person's pace: the frames show Bergen highlighted under the pointer.
linger $(find_element "menu item" Bergen)
sleep 0.8
press $(find_element "push button" OK)
stop_recording
finish

# replay CASE CHOICES [X Y]
replay() {
  local name=$1
  shift
  form "$name" "$@"
  replay_as "$name" trip --json
  finish
}
pace replay "Oslo|Bergen|Tromsø"
replay same "Oslo|Bergen|Tromsø"
# Bergen elsewhere in the popup, and the window moved.
replay reordered "Tromsø|Oslo|Stavanger|Bergen" 80 90
# Bergen gone: refused, nothing chosen (a near-namesake stays).
replay removed "Oslo|Bergem|Tromsø"
if [[ -n ${DRIFTS:-} ]]; then
  LOOK="GTK_THEME=Adwaita:dark" replay dark "Oslo|Bergen|Tromsø"
  LOOK="GDK_SCALE=2" replay scale2 "Tromsø|Oslo|Bergen"
  # Larger fonts: GTK reads them from its settings file.
  mkdir -p "$OUT/big-font/gtk-3.0"
  printf '[Settings]\ngtk-font-name=DejaVu Sans 15\n' >"$OUT/big-font/gtk-3.0/settings.ini"
  LOOK="XDG_CONFIG_HOME=$OUT/big-font" replay font "Oslo|Bergen|Tromsø"
fi
