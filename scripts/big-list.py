#!/usr/bin/python3
"""A GTK 3 window with a list (a tree view) of ROWS people and their
cities, for tests of what a recording costs an application that exposes a
huge table: its accessible table reports ROWS x 2 cells. Prints
"NAME|CITY" of the selected row when OK is pressed, then exits.

Usage: big-list.py ROWS [FIRST]
  FIRST  the number of the first row's person (default 1): 0 puts one more
         row above the others
"""
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gtk  # noqa: E402


def main():
    n_rows = int(sys.argv[1])
    first = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    store = Gtk.ListStore(str, str)
    for row in range(first, first + n_rows):
        store.append((f"Person {row}", f"City {row}"))
    view = Gtk.TreeView(model=store)
    view.set_fixed_height_mode(True)
    for column, title in enumerate(("Name", "City")):
        renderer = Gtk.CellRendererText()
        tree_column = Gtk.TreeViewColumn(title, renderer, text=column)
        tree_column.set_sizing(Gtk.TreeViewColumnSizing.FIXED)
        tree_column.set_fixed_width(200)
        view.append_column(tree_column)
    scrolled = Gtk.ScrolledWindow()
    scrolled.add(view)
    scrolled.set_vexpand(True)

    def chosen(_button):
        model, rows = view.get_selection().get_selected()
        if rows is not None:
            print(f"{model[rows][0]}|{model[rows][1]}", flush=True)
        Gtk.main_quit()

    ok = Gtk.Button(label="OK")
    ok.connect("clicked", chosen)
    box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6)
    box.pack_start(scrolled, True, True, 0)
    box.pack_start(ok, False, False, 0)
    window = Gtk.Window(title="People")
    window.set_default_size(500, 400)
    window.connect("destroy", Gtk.main_quit)
    window.add(box)
    window.show_all()
    Gtk.main()


if __name__ == "__main__":
    main()
