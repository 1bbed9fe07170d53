#!/usr/bin/python3
"""Samples how long an accessible application takes to answer: a
Properties.Get of its root object's Name, sent straight to it on the
accessibility bus (no client-side cache), every INTERVAL seconds until
SECONDS pass or the file STOP exists. Prints one line per sample, the
answer time in milliseconds, or "timeout" when none came within 16 s.

Usage: a11y-answers.py APP SECONDS INTERVAL [STOP]
  APP  the accessible application's name (soffice, zenity, ...)
Waits up to 20 s for the application; exits 1 if it never shows.
"""
import os
import sys
import time

from gi.repository import Gio, GLib

ANSWER_WITHIN_MS = 16000


def accessibility_bus():
    session = Gio.bus_get_sync(Gio.BusType.SESSION)
    reply = session.call_sync("org.a11y.Bus", "/org/a11y/bus", "org.a11y.Bus",
                              "GetAddress", None, GLib.VariantType("(s)"), 0,
                              5000, None)
    flags = (Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT
             | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION)
    return Gio.DBusConnection.new_for_address_sync(reply.unpack()[0], flags,
                                                   None, None)


def name_of(bus, dest, path, timeout_ms):
    reply = bus.call_sync(dest, path, "org.freedesktop.DBus.Properties", "Get",
                          GLib.Variant("(ss)", ("org.a11y.atspi.Accessible",
                                                "Name")),
                          None, 0, timeout_ms, None)
    return reply.unpack()[0]


def find_app(bus, wanted):
    reply = bus.call_sync("org.a11y.atspi.Registry",
                          "/org/a11y/atspi/accessible/root",
                          "org.a11y.atspi.Accessible", "GetChildren", None,
                          None, 0, 5000, None)
    for dest, path in reply.unpack()[0]:
        try:
            if name_of(bus, dest, path, 3000) == wanted:
                return dest, path
        except GLib.Error:
            pass
    return None


def main():
    app, seconds, interval = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    stop = sys.argv[4] if len(sys.argv) > 4 else None
    bus = accessibility_bus()
    deadline = time.time() + 20
    found = None
    while found is None and time.time() < deadline:
        found = find_app(bus, app)
        if found is None:
            time.sleep(0.2)
    if found is None:
        print(f"no accessible application {app!r}", file=sys.stderr)
        return 1
    end = time.time() + seconds
    while time.time() < end and not (stop and os.path.exists(stop)):
        started = time.monotonic()
        try:
            name_of(bus, found[0], found[1], ANSWER_WITHIN_MS)
            print(f"{1000 * (time.monotonic() - started):.1f}", flush=True)
        except GLib.Error:
            print("timeout", flush=True)
        time.sleep(interval)
    return 0


if __name__ == "__main__":
    sys.exit(main())
