# Sourced by the zenity scenarios: elements found by zenity's accessibility
# tree, and the accessibility bus started before the application.
find_element() { "$SCRIPTS/a11y-find.py" zenity "$@"; }

dbus-send --session --print-reply --dest=org.a11y.Bus /org/a11y/bus \
  org.freedesktop.DBus.Properties.Get string:org.a11y.Status string:IsEnabled >/dev/null
