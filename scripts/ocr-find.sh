#!/usr/bin/env bash
# Prints the centre "x y" of a word on the screen, in screen coordinates,
# as Tesseract reads a screenshot (as sparse text: words anywhere, which
# finds an icon's label a page's layout misses): for tests that drive an
# application whose elements no accessibility tree names (an icon view's
# items), so no pixel position is hard-coded. A word read with stray marks
# around it (a focus line read as "_") counts. Waits up to 10 s for the
# word; exits 1 if it never shows.
# Usage: ocr-find.sh WORD   (REPRISE: the reprise binary; on $DISPLAY;
# where it never shows, the last screenshot goes to $OUT, if set)
set -euo pipefail
: "${REPRISE:?}"
word=$1
shot=$(mktemp --suffix=.png)
trap 'rm -f "$shot"' EXIT
for _ in $(seq 20); do
  "$REPRISE" screenshot -o "$shot" >/dev/null 2>&1 || true
  # TSV: level page block par line word left top width height conf text.
  found=$(OMP_THREAD_LIMIT=1 tesseract "$shot" - --psm 11 tsv 2>/dev/null |
    awk -F'\t' -v word="$word" '{ text = $12; gsub(/^[^[:alnum:]]+|[^[:alnum:]]+$/, "", text) }
      text == word { printf "%d %d\n", $7 + $9 / 2, $8 + $10 / 2; exit }')
  if [[ -n $found ]]; then
    echo "$found"
    exit 0
  fi
  sleep 0.5
done
# The last screen read, for whoever looks into why (a scenario's $OUT).
[[ -n ${OUT:-} ]] && cp "$shot" "$OUT/ocr-find-$word.png"
echo "error: \"$word\" never showed on the screen" >&2
exit 1
