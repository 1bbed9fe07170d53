#!/usr/bin/env bash
# Installs what Reprise needs on a fresh Debian 12 machine (as root): the
# -dev libraries its crates link against, Tesseract and AT-SPI, and (unless
# given --tool-only) the X server, window manager and applications of the
# tests and the demo. Safe to run again.
set -euo pipefail

# What the tool itself needs to build and run on a desktop.
tool_packages=(
  # Build: a C compiler and linker (bundled SQLite, rustls' crypto);
  # xcap always builds its Wayland/PipeWire code on Linux (bindgen needs
  # libclang); rdev probes xi and xtst.
  build-essential pkg-config libx11-dev libxcb1-dev libxtst-dev libxi-dev
  libwayland-dev libpipewire-0.3-dev libgbm-dev libegl-dev libclang-dev
  # The offline describer reads text with Tesseract (leptess links it).
  tesseract-ocr tesseract-ocr-eng libtesseract-dev libleptonica-dev
  # AT-SPI: the accessibility trees the recorder reads and replay finds
  # elements in.
  at-spi2-core dbus
  # The fleet's schedules name time zones (/usr/share/zoneinfo).
  tzdata
)

# What the demo and the tests add: a virtual display and the applications
# they drive.
test_packages=(
  # A virtual display, a window manager, and applications to drive.
  xvfb xauth openbox xdotool x11-apps xterm x11-utils x11-xkb-utils x11-xserver-utils xinput
  # Two monitors on one screen (RandR), which Xvfb cannot give: Xorg with
  # the dummy video driver.
  xserver-xorg-core xserver-xorg-video-dummy
  # A settings daemon: the recorder reads its double-click settings (XSETTINGS).
  xsettingsd
  # The fixture application's software OpenGL and fonts.
  libgl1-mesa-dri libegl1 libgles2 fonts-dejavu-core
  # Headless Chromium checks the HTML reports as a person would see them,
  # and drives the fleet's web console through WebDriver (chromedriver).
  chromium chromium-driver
  # A GTK application whose accessibility tree (AT-SPI, read with pyatspi)
  # is the ground truth of a segmentation test.
  gtk-3-examples python3-pyatspi
  # Third-party applications the identity tests replay on: a GTK list
  # dialog (zenity), a Qt 5 editor (FeatherPad), and GTK 4's own demos
  # (gtk4-demo, gtk4-widget-factory), whose boxes are not the screen's.
  zenity featherpad gtk-4-examples
  # A Tk editor with no accessibility tree (Python's IDLE), and a file
  # manager whose icon view names no item (Thunar).
  idle thunar
  # A spreadsheet whose sheet reports 2^31 cells (recording must not slow
  # it), with its GTK 3 front end so that it shows on AT-SPI; unzip reads
  # the files it saves.
  libreoffice-calc libreoffice-gtk3 unzip
  # GTK 3 for Python: a list of a million rows (scripts/big-list.py).
  gir1.2-gtk-3.0
  # The fleet's queue (Redis Streams), and redis-cli for its quickstart.
  redis-server redis-tools
  # The manual pages' test reads them with man; a TLS server (openssl
  # s_server) that the HTTP clients' test shakes hands with.
  man-db openssl
)

# `--tool-only`: what `cargo install --locked --path .` needs, no more.
packages=("${tool_packages[@]}")
if [[ ${1:-} != --tool-only ]]; then
  packages+=("${test_packages[@]}")
fi

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if ! command -v cargo >/dev/null; then
  echo "error: cargo is not installed; install the Rust toolchain (1.95 or newer) first" >&2
  exit 1
fi
