# Sourced by the zenity scenarios: elements found by zenity's accessibility
# tree, and the accessibility bus started before the application.
find_element() { "$SCRIPTS/a11y-find.py" zenity "$@"; }

accessibility_bus

# record_pick: the recording "pick" of a list dialog (zenity-list.sh,
# zenity-monitors.sh): Maria Olsen of Tromsø, then OK; ended by `finish`.
record_pick() {
  start_recording pick
  press $(find_element "table cell" "Maria Olsen" Tromsø)
  sleep 0.8
  press $(find_element "push button" OK)
  stop_recording
  finish
}
