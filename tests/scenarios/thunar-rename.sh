#!/usr/bin/env bash
# A file manager's icon view: Thunar (Xfce's, GTK 3), whose icon view names
# no item in its accessibility tree (the view is one pane). Records a
# click on beta.txt among alpha.txt and gamma.txt, F2, "renamed" typed
# into the rename dialog and Enter; replays it on a fresh folder: the
# window moved, the dark theme, scale 2, the window resized, a file added
# that comes before beta.txt (the icons move), and beta.txt gone (a
# refusal: nothing renamed). Judged by the folder's files after each case
# (CASE.files, one name a line), with each replay's exit code and messages
# (CASE.code, CASE.err). Runs inside dbus-run-session on $DISPLAY.
set -euo pipefail
: "${REPRISE:?}" "${SCRIPTS:?}" "${OUT:?}"
source "$(dirname "$0")/recording.sh"

accessibility_bus

# thunar CASE X Y [W H] [FILE...]: a fresh Thunar (its settings its own)
# showing $OUT/CASE/files, which holds alpha.txt, beta.txt and gamma.txt
# (FILES, where set, instead), its window at X, Y (and W x H). LOOK may hold
# environment settings for it (a theme, a scale). Sets `fm_pid`.
thunar_at() {
  local dir=$OUT/$1/files
  rm -rf "$OUT/$1"
  mkdir -p "$dir"
  for file in ${FILES:-alpha.txt beta.txt gamma.txt}; do touch "$dir/$file"; done
  env XDG_CONFIG_HOME="$OUT/$1/config" ${LOOK:-} thunar "$dir" >/dev/null 2>&1 &
  fm_pid=$!
  place_window name "^files - Thunar$" "${@:2}"
  sleep 1
}

# done_with CASE: Thunar ended, the folder's files listed in $OUT/CASE.files.
done_with() {
  sleep 0.5
  ls "$OUT/$1/files" >"$OUT/$1.files"
  kill "$fm_pid" 2>/dev/null || true
  wait "$fm_pid" 2>/dev/null || true
}

thunar_at recorded 200 100 760 520
beta=$("$SCRIPTS/ocr-find.sh" beta.txt)
start_recording thunar
linger $beta
sleep 0.6
xdotool key F2
sleep 1.5
xdotool type --delay 80 renamed
sleep 0.5
xdotool key Return
stop_recording
done_with recorded

thunar_at moved 420 220 760 520
replay_as moved thunar
done_with moved

LOOK=GTK_THEME=Adwaita:dark thunar_at dark 200 100 760 520
replay_as dark thunar
done_with dark

LOOK=GDK_SCALE=2 thunar_at scaled 40 20 1200 760
replay_as scaled thunar
done_with scaled

thunar_at resized 150 80 980 600
replay_as resized thunar
done_with resized

FILES="alpha.txt aardvark.txt beta.txt gamma.txt" thunar_at added 200 100 760 520
replay_as added thunar
done_with added

FILES="alpha.txt gamma.txt" thunar_at gone 200 100 760 520
replay_as gone thunar
done_with gone
