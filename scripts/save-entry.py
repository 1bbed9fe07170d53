#!/usr/bin/python3
"""A GTK 3 window of an entry and a Save button that writes the entry's
text to FILE (the application's own record of what it was asked to do):
openadapt-flow's qualification window, for record/replay. Prints nothing;
the file is the judge.

Usage: save-entry.py FILE [clean|twin|replaced|late|disabled|append]
  clean     the window as recorded
  twin      a second Save button, the same role and name (writing nothing):
            nothing tells the two apart
  replaced  the button in another container and place (another tree path,
            other bounds), the same role and name
  late      the button shows 2 s after the window
  disabled  the button cannot be pressed (a press of it saves nothing)
  append    each Save adds the text as a line of FILE (a batch's rows, one
            line each), and FILE.entry holds what the entry shows, as it
            changes
"""
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402


def main():
    path = sys.argv[1]
    mode = sys.argv[2] if len(sys.argv) > 2 else "clean"
    entry = Gtk.Entry()

    def save(_button):
        if mode == "append":
            with open(path, "a", encoding="utf-8") as out:
                out.write(entry.get_text() + "\n")
            return
        with open(path, "w", encoding="utf-8") as out:
            out.write(entry.get_text())

    def shown(_entry):
        with open(path + ".entry", "w", encoding="utf-8") as out:
            out.write(entry.get_text())

    if mode == "append":
        entry.connect("changed", shown)

    button = Gtk.Button(label="Save")
    button.connect("clicked", save)
    box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=8)
    box.set_border_width(12)
    box.pack_start(Gtk.Label(label="Text to save"), False, False, 0)
    box.pack_start(entry, False, False, 0)
    if mode == "replaced":
        # Another path (a frame and a row of its own) and other bounds.
        row = Gtk.Box(orientation=Gtk.Orientation.HORIZONTAL, spacing=0)
        row.pack_end(button, False, False, 40)
        frame = Gtk.Frame(label="Actions")
        frame.add(row)
        box.pack_start(Gtk.Label(label=""), False, False, 30)
        box.pack_start(frame, False, False, 0)
    else:
        box.pack_start(button, False, False, 0)
    if mode == "disabled":
        button.set_sensitive(False)
    if mode == "twin":
        box.pack_start(Gtk.Button(label="Save"), False, False, 0)
    window = Gtk.Window(title="Save text")
    window.set_default_size(320, 160)
    window.connect("destroy", Gtk.main_quit)
    window.add(box)
    window.show_all()
    if mode == "late":
        button.hide()

        def show_button():
            button.show()
            return False

        GLib.timeout_add(2000, show_button)
    Gtk.main()


if __name__ == "__main__":
    main()
