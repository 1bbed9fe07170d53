# Sourced inside a D-Bus session, on $DISPLAY: start_widget_factory starts
# gtk3-widget-factory with its accessibility tree exposed, waits for its
# window, and sets `app` (its pid) and `win` (its window id). The caller
# kills "$app". Used by scripts/gtk-capture.sh and the recorder's AT-SPI test.
start_widget_factory() {
  unset NO_AT_BRIDGE
  # Start the accessibility bus before the application, or its widgets appear
  # in the tree only many seconds later.
  dbus-send --session --print-reply --dest=org.a11y.Bus /org/a11y/bus \
    org.freedesktop.DBus.Properties.Get string:org.a11y.Status string:IsEnabled >/dev/null
  gtk3-widget-factory >/dev/null 2>&1 &
  app=$!
  win=
  for _ in $(seq 200); do
    win=$(xdotool search --onlyvisible --class gtk3-widget-factory 2>/dev/null | head -1) && [[ -n $win ]] && break
    sleep 0.1
  done
  [[ -n $win ]] || { echo "error: gtk3-widget-factory's window did not appear" >&2; return 1; }
}
