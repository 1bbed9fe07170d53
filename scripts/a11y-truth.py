#!/usr/bin/python3
"""Ground truth for the segmentation benchmark: the boxes of the visible
interactive widgets of a running GTK application, read from its AT-SPI tree
(Debian's python3-pyatspi, under the same dbus-run-session as the
application). Prints a JSON array of {"role", "name", "rect": [x, y, w, h]}
in the coordinates of the window whose client area starts at ORIGIN_X,
ORIGIN_Y on the screen.

Under GDK_SCALE, GTK reports its boxes in logical pixels: SCALE (default 1)
turns them into the image's pixels.

Usage: a11y-truth.py APPLICATION_NAME ORIGIN_X ORIGIN_Y WIDTH HEIGHT [SCALE]
"""
import json
import sys

import pyatspi
from gi.repository import GLib

# The widgets a person clicks or types into (the list: buttons, text
# fields, check and radio boxes, combo boxes, menu items, list rows).
INTERACTIVE = {
    "push button", "toggle button", "check box", "radio button", "combo box",
    "text", "entry", "password text", "spin button", "menu item",
    "check menu item", "radio menu item", "list item", "table row",
    "page tab", "slider", "link", "menu",
}
MAX_NODES = 20000


def name_of(app):
    """An application's name, or None for one that exited while read."""
    try:
        return None if app is None else app.name
    except GLib.GError:
        return None


def main():
    app_name, ox, oy, width, height = sys.argv[1], *map(int, sys.argv[2:6])
    scale = int(sys.argv[6]) if len(sys.argv) > 6 else 1
    desktop = pyatspi.Registry.getDesktop(0)
    apps = [app for app in desktop if name_of(app) == app_name]
    if not apps:
        names = [name_of(app) for app in desktop]
        sys.exit(f"no accessible application named {app_name!r} (there are: {names})")
    out, seen, stack = [], 0, [apps[0]]
    while stack and seen < MAX_NODES:
        node = stack.pop()
        seen += 1
        try:
            states = node.getState()
            role = node.getRoleName()
            children = list(node)
        except Exception:  # a widget that went away while being read
            continue
        showing = states.contains(pyatspi.STATE_SHOWING) and states.contains(pyatspi.STATE_VISIBLE)
        if role in ("frame", "application") or showing:
            stack.extend(child for child in children if child is not None)
        if not showing or role not in INTERACTIVE:
            continue
        try:
            box = node.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
        except NotImplementedError:
            continue
        x, y = box.x * scale - ox, box.y * scale - oy
        w, h = box.width * scale, box.height * scale
        # Hidden widgets report about -2^31; keep what lies in the window.
        if w < 4 or h < 4 or x < 0 or y < 0 or x + w > width or y + h > height:
            continue
        out.append({"role": role, "name": node.name, "rect": [x, y, w, h]})
    json.dump(out, sys.stdout)


main()
