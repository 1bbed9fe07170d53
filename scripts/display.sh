# Sourced by the demo and the benchmarks: starts a private Xvfb (it picks a
# free display number and tells it through -displayfd) with openbox, and
# waits until both answer. The caller keeps `pids` and kills them on exit.
start_display() { # SIZE (e.g. 1280x800) WORKDIR
  local size=$1 work=$2
  Xvfb -displayfd 3 -screen 0 "${size}x24" -nolisten tcp 3>"$work/display" 2>/dev/null &
  pids+=($!)
  for _ in $(seq 100); do [[ -s $work/display ]] && break; sleep 0.1; done
  DISPLAY=:$(cat "$work/display")
  export DISPLAY
  openbox >/dev/null 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do xprop -root _NET_SUPPORTING_WM_CHECK 2>/dev/null | grep -q "window id" && break; sleep 0.1; done
}
