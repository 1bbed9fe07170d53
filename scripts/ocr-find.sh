#!/usr/bin/env bash
# Prints the centre "x y" of a word on the screen, in screen coordinates,
# for tests that drive an application whose elements no accessibility tree
# names (an icon view's items), so no pixel position is hard-coded. The
# screen is read as the offline describer reads a window (`reprise segment
# --describe`: each text's box read by Tesseract, enlarged; Tesseract on a
# whole screen misses small labels), and a text that reads as the word
# (letters and digits alike: "beta txt" is beta.txt) gives its box's
# centre. Waits up to 20 s for the word; exits 1 if it never shows.
# Usage: ocr-find.sh WORD   (REPRISE: the reprise binary; on $DISPLAY;
# where it never shows, the last screenshot goes to $OUT, if set)
set -euo pipefail
: "${REPRISE:?}"
word=$1
shot=$(mktemp --suffix=.png)
trap 'rm -f "$shot"' EXIT
for _ in $(seq 4); do
  "$REPRISE" screenshot -o "$shot" >/dev/null 2>&1 || true
  found=$(OMP_THREAD_LIMIT=1 "$REPRISE" segment --describe --json "$shot" 2>/dev/null |
    /usr/bin/python3 -c '
import json, re, sys
alike = lambda text: re.sub(r"[^0-9a-z]", "", text.lower())
word = alike(sys.argv[1])
for segment in json.load(sys.stdin):
    quoted = re.search(r"\"(.*)\"", segment.get("description", ""))
    if segment["kind"] == "text" and quoted and alike(quoted.group(1)) == word:
        print(*segment["click_point"])
        break
' "$word" || true)
  if [[ -n $found ]]; then
    echo "$found"
    exit 0
  fi
  sleep 1
done
# The last screen read, for whoever looks into why (a scenario's $OUT).
[[ -n ${OUT:-} ]] && cp "$shot" "$OUT/ocr-find-$word.png"
echo "error: \"$word\" never showed on the screen" >&2
exit 1
