#!/usr/bin/python3
"""Prints the centre "x y" of a showing accessible element, in screen
coordinates, for tests that drive third-party applications by what their
accessibility tree says (so no pixel position is hard-coded).

Usage: a11y-find.py APP ROLE NAME [ROW_TEXT]
  APP       the accessible application's name (zenity, gedit, ...)
  ROLE      an AT-SPI role name ("table cell", "push button", ...)
  NAME      the element's accessible name
  ROW_TEXT  for a table cell: the text of another cell in its row
Waits up to 10 s for the element; exits 1 if it never shows. An
application that exits while it is read is skipped, not an error.

GTK 4 under X11 gives its boxes relative to its window's surface and says
Showing of its windows only: SURFACE_ORIGIN="X Y" (where the surface's
content starts on the screen) moves the centre there, and takes Visible for
Showing.

WINDOW="TITLE" looks only in the application's windows of that name (two
dialogs of one application, each with its own entry).
"""
import os
import sys
import time

import pyatspi
from gi.repository import GLib


SURFACE = os.environ.get("SURFACE_ORIGIN")
WINDOW = os.environ.get("WINDOW")


def showing(acc):
    state = acc.getState()
    if SURFACE and state.contains(pyatspi.STATE_VISIBLE):
        return True
    return state.contains(pyatspi.STATE_SHOWING)


def extents(acc):
    return acc.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)


def find(node, role, name, row_text, depth=0):
    if node is None or depth > 30:
        return None
    if node.getRoleName() == role and node.name == name and showing(node):
        if row_text is None:
            return node
        ext = extents(node)
        for sibling in node.parent:
            other = extents(sibling)
            if sibling.name == row_text and other.y == ext.y and showing(sibling):
                return node
    if node.childCount > 1000:
        return None
    for child in node:
        found = find(child, role, name, row_text, depth + 1)
        if found is not None:
            return found
    return None


def main():
    app_name, role, name = sys.argv[1:4]
    row_text = sys.argv[4] if len(sys.argv) > 4 else None
    deadline = time.time() + 10
    while time.time() < deadline:
        for app in pyatspi.Registry.getDesktop(0):
            try:
                if app is None or app.name != app_name:
                    continue
                roots = [app] if WINDOW is None else [w for w in app if w is not None and w.name == WINDOW]
                found = next(
                    (f for f in (find(root, role, name, row_text) for root in roots) if f is not None),
                    None,
                )
                if found is not None:
                    ext = extents(found)
                    dx, dy = map(int, SURFACE.split()) if SURFACE else (0, 0)
                    print(dx + ext.x + ext.width // 2, dy + ext.y + ext.height // 2)
                    return 0
            except GLib.GError:
                # An application (a splash screen, a helper process) went
                # away while it was being read: look again on the next pass.
                continue
        time.sleep(0.2)
    print(f"no showing {role} {name!r} in {app_name}", file=sys.stderr)
    return 1


sys.exit(main())
