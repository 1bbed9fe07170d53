# Sourced by the FeatherPad scenarios: a fresh Qt 5 editor with its
# accessibility tree on, and elements found by that tree.
find_element() { "$SCRIPTS/a11y-find.py" FeatherPad "$@"; }

# Qt 5 reaches the accessibility bus through this address (it does not find
# it through the session bus here), and exposes its tree only when told to.
AT_SPI_BUS_ADDRESS=$(dbus-send --session --print-reply=literal --dest=org.a11y.Bus \
  /org/a11y/bus org.a11y.Bus.GetAddress | tr -d ' ')
export AT_SPI_BUS_ADDRESS QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1
# A fresh configuration each time: FeatherPad remembers its window and files.
export XDG_CONFIG_HOME=$OUT/config

# editor X Y: a fresh FeatherPad with its window at (X, Y). LOOK may hold
# environment settings for it (a scale, a font size).
editor() {
  rm -rf "$XDG_CONFIG_HOME"
  env ${LOOK:-} featherpad >/dev/null 2>&1 &
  editor_pid=$!
  find_element "push button" Save >/dev/null
  local window
  window=$(xdotool search --onlyvisible --class featherpad | head -1)
  xdotool windowmove "$window" "$1" "$2"
  sleep 0.5
}
finish() {
  kill "$editor_pid" 2>/dev/null || true
  wait "$editor_pid" 2>/dev/null || true
}

