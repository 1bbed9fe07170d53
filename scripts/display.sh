# Sourced by the demo and the benchmarks: `wait_for`, and start_display, which
# starts a private Xvfb (it picks a
# free display number and tells it through -displayfd) with openbox, and
# waits until both answer. The caller keeps `pids` and kills them on exit.
start_display() { # SIZE (e.g. 1280x800) WORKDIR
  local size=$1 work=$2
  # Everything from here on talks to this X server, not to a Wayland session.
  unset WAYLAND_DISPLAY XDG_SESSION_TYPE
  Xvfb -displayfd 3 -screen 0 "${size}x24" -nolisten tcp 3>"$work/display" 2>"$work/xvfb.err" &
  pids+=($!)
  for _ in $(seq 100); do [[ -s $work/display ]] && break; sleep 0.1; done
  if [[ ! -s $work/display ]]; then
    echo "error: Xvfb did not start within 10 s; it said: $(tail -3 "$work/xvfb.err")" >&2
    return 1
  fi
  DISPLAY=:$(cat "$work/display")
  export DISPLAY
  openbox >"$work/openbox.err" 2>&1 &
  pids+=($!)
  # openbox announces itself early in its start-up; a window mapped before it
  # is ready stays unmapped for good. Wait for its client list, then until it
  # has managed a probe window (a few attempts).
  local listed=0
  for _ in $(seq 100); do
    xprop -root _NET_CLIENT_LIST 2>/dev/null | grep -q "window id" && { listed=1; break; }
    sleep 0.1
  done
  if ((!listed)); then
    echo "error: openbox did not start on display $DISPLAY within 10 s; it said: $(tail -3 "$work/openbox.err")" >&2
    return 1
  fi
  local probe managed=0
  for _ in 1 2 3 4 5; do
    xmessage -name reprise-wm-probe ready >/dev/null 2>&1 &
    probe=$!
    for _ in $(seq 40); do
      xdotool search --onlyvisible --classname reprise-wm-probe >/dev/null 2>&1 && { managed=1; break; }
      sleep 0.05
    done
    kill "$probe" 2>/dev/null; wait "$probe" 2>/dev/null || true
    ((managed)) && return 0
  done
  echo "error: openbox on display $DISPLAY does not manage windows" >&2
  return 1
}

# For a script of its own: a fresh work directory (`work`) and a private
# display; on exit, everything in `pids` is killed and the directory removed.
start_private_display() { # SIZE
  work=$(mktemp -d)
  pids=()
  trap 'for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"' EXIT
  start_display "$1" "$work"
}

# built PROFILE: `reprise` is the binary of that cargo profile (debug,
# release); the script stops, saying what is missing, where it is not built.
built() {
  reprise=$PWD/target/$1/reprise
  [[ -x $reprise ]] || { echo "error: build first ($reprise is missing)" >&2; exit 1; }
}

# wait_for SECONDS WHAT COMMAND...: runs COMMAND (quietly) every 0.1 s until
# it succeeds; after SECONDS, says that WHAT did not come and fails. Every
# wait of the scripts goes through here: none waits for ever, and none
# gives up without a word.
wait_for() {
  local seconds=$1 what=$2 tries
  shift 2
  for ((tries = seconds * 10; tries > 0; tries--)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "error: $what did not come within $seconds s" >&2
  return 1
}
