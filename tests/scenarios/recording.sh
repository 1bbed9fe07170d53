# Sourced by the scenario scripts: a person's press, and the recorder
# started and stopped as a person would.

# accessibility_bus: the session's accessibility bus started (asking its
# status starts it), as a desktop session starts it for its applications.
accessibility_bus() {
  dbus-send --session --print-reply --dest=org.a11y.Bus /org/a11y/bus \
    org.freedesktop.DBus.Properties.Get string:org.a11y.Status string:IsEnabled >/dev/null
}

# press X Y: a left press held as long as a person holds one, a moment
# after the pointer arrives (no person presses within a millisecond of
# arriving; the recorder asks what lies under the pointer at its moves).
press() { xdotool mousemove "$1" "$2" sleep 0.05 mousedown 1 sleep 0.12 mouseup 1; }

# place_window KIND PATTERN X Y [W H]: waits (10 s at most) for a showing
# window whose KIND (name or class) matches PATTERN, gives it a moment to
# map, sizes it to W x H and moves it to X, Y. Sets `window` and, from its
# geometry, X, Y, WIDTH and HEIGHT.
place_window() {
  window=""
  for _ in $(seq 100); do
    window=$(xdotool search --onlyvisible "--$1" "$2" 2>/dev/null | head -1) && [[ -n $window ]] && break
    sleep 0.1
  done
  [[ -n $window ]] || { echo "error: no window whose $1 is $2 showed" >&2; return 1; }
  sleep 0.5
  if [[ -n ${5:-} ]]; then xdotool windowsize --sync "$window" "$5" "$6"; fi
  xdotool windowmove --sync "$window" "$3" "$4"
  sleep 0.5
  eval "$(xdotool getwindowgeometry --shell "$window")"
}

# linger X Y: a press after the pointer rested on its target a second, as a
# person's does while reading it: the recorder's frames show the target
# under the pointer (a hovered item highlighted) before the press.
linger() {
  xdotool mousemove "$1" "$2"
  sleep 1
  press "$1" "$2"
}

# start_recording NAME [ARGS...]: `reprise record` in the background (its
# messages in $OUT/record.err), returning once it is ready: it lists the
# recording (bounded), and its input hook a moment later. Sets `recorder`.
start_recording() {
  "$REPRISE" record --name "$1" --duration 60 --stop-sequence none "${@:2}" 2>"$OUT/record.err" &
  recorder=$!
  local listed=0
  for _ in $(seq 100); do
    "$REPRISE" list --json 2>/dev/null | grep -q "\"name\": *\"$1\"" && { listed=1; break; }
    sleep 0.2
  done
  if ((!listed)); then
    echo "error: the recorder did not list $1 within 20 s; it said: $(tail -3 "$OUT/record.err")" >&2
    return 1
  fi
  sleep 1
}

# stop_recording: Ctrl-C, as a person stops it, once the last action's
# frames are taken (the duration only bounds a stuck run).
stop_recording() {
  sleep 0.8
  kill -INT "$recorder"
  wait "$recorder"
}

# replay_as CASE RECORDING [ARGS...]: replays RECORDING with the strategy
# and ladder STRATEGY and RUNGS choose (visual and the default ladder), one
# retry, and ARGS; its exit code goes to $OUT/CASE.code, its wall time to
# $OUT/CASE.seconds, its messages to
# $OUT/CASE.err and what it printed (each step, with --json) to
# $OUT/CASE.stdout. With REPORTS set, the run's HTML report goes to
# $REPORTS/CASE.html.
replay_as() {
  local started
  started=$(date +%s.%N)
  run_as "$1" "$REPRISE" replay "$2" --strategy "${STRATEGY:-visual}" ${RUNGS:+--rungs "$RUNGS"} \
    --max-retries 1 "${@:3}"
  # Its wall time, in seconds (scripts/bench-pace.sh reads it).
  awk -v from="$started" -v to="$(date +%s.%N)" 'BEGIN { printf "%.3f\n", to - from }' >"$OUT/$1.seconds"
  if [[ -n ${REPORTS:-} ]]; then
    "$REPRISE" report last -o "$REPORTS/$1.html" >/dev/null
  fi
}

# run_as CASE COMMAND...: runs COMMAND whatever its exit code; what it
# printed goes to $OUT/CASE.stdout, its messages to $OUT/CASE.err and its
# exit code to $OUT/CASE.code.
run_as() {
  local case=$1
  shift
  set +e
  "$@" >"$OUT/$case.stdout" 2>"$OUT/$case.err"
  echo $? >"$OUT/$case.code"
  set -e
}

# ended PID SECONDS: waits (at most SECONDS) for an application to exit on
# its own (a dialog answered), then ends it if it has not.
ended() {
  for _ in $(seq $(($2 * 10))); do
    kill -0 "$1" 2>/dev/null || break
    sleep 0.1
  done
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

# pace CASE_COMMAND [ARGS...]: with PACE=N (scripts/bench-pace.sh), runs
# the scenario's unchanged case (`CASE_COMMAND NAME ARGS...`) N times with
# each strategy, naive then visual (cases naive-1, visual-1, …), and ends
# the scenario there; without PACE, does nothing.
pace() {
  [[ -n ${PACE:-} ]] || return 0
  local round strategy
  for ((round = 1; round <= PACE; round++)); do
    for strategy in naive visual; do
      STRATEGY=$strategy "$1" "$strategy-$round" "${@:2}"
    done
  done
  exit 0
}
