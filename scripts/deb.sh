#!/usr/bin/env bash
# Makes a Debian package of the tool, target/debian/reprise_<version>_<arch>.deb,
# with its manual pages and shell completions (cargo-deb, installed here if it
# is missing; the packages of `scripts/setup-debian.sh --tool-only` first).
# Usage: scripts/deb.sh [release|debug]   (debug: a quick check of the package;
# cargo-deb warns that it is for releases)
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${1:-release}
command -v cargo-deb >/dev/null || cargo install --locked cargo-deb
if [[ $profile == release ]]; then
  cargo build --release --locked --bin reprise
  cargo_profile=release
else
  cargo build --locked --bin reprise
  cargo_profile=dev
fi
reprise=target/$profile/reprise
assets=target/deb-assets
rm -rf "$assets"
mkdir -p "$assets/man" "$assets/completions"
"$reprise" man --dir "$assets/man" >/dev/null
"$reprise" completions bash >"$assets/completions/reprise"
"$reprise" completions zsh >"$assets/completions/_reprise"
"$reprise" completions fish >"$assets/completions/reprise.fish"
cargo deb --no-build --locked --profile "$cargo_profile" -p reprise
