#!/usr/bin/env bash
# Peak memory of reading big input: `events reduce` of 10^6 raw events (an
# 87 MB JSON array of moves, clicks and keys) and `replay --each` over a
# 10 MB CSV (read, then refused for the recording it names does not
# exist, so only the reader is measured). Prints each peak RSS and wall
# time. Uses target/debug/reprise unless REPRISE is set.
set -euo pipefail
cd "$(dirname "$0")/.."
REPRISE=${REPRISE:-target/debug/reprise}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" <<'PY'
import json, random, sys
random.seed(1)
work = sys.argv[1]
with open(f"{work}/events.json", "w") as out:
    out.write("[")
    t, n, first = 0.0, 0, True
    def put(event):
        global first
        out.write(("" if first else ",") + json.dumps(event))
        first = False
    while n < 1_000_000:
        r = random.random()
        t += 0.01
        if r < 0.6:
            put({"name": "move", "timestamp": round(t, 3), "mouse_x": random.randint(0, 1000), "mouse_y": random.randint(0, 800)}); n += 1
        elif r < 0.8:
            x, y = random.randint(0, 1000), random.randint(0, 800)
            for pressed in (True, False):
                put({"name": "click", "timestamp": round(t, 3), "mouse_x": x, "mouse_y": y, "mouse_button_name": "left", "mouse_pressed": pressed}); t += 0.05
            n += 2
        else:
            c = random.choice("abcdefghij")
            for name in ("press", "release"):
                put({"name": name, "timestamp": round(t, 3), "key_char": c, "key_vk": 38}); t += 0.03
            n += 2
    out.write("]")
with open(f"{work}/rows.csv", "w") as out:
    out.write("user_name,note\n")
    row = 0
    while out.tell() < 10 * 1024 * 1024:
        out.write(f'user{row},"a note, with a comma and ""quotes"" {row}: {"x" * 100}"\n')
        row += 1
PY
measure() {
  /usr/bin/time -f "%M %e" -o "$work/time" "$@" >/dev/null 2>"$work/err" || true
  read -r kb seconds < <(tail -1 "$work/time")
  echo "$((kb / 1024)) MB peak, ${seconds} s"
}
echo "events reduce, 10^6 events ($(du -m "$work/events.json" | cut -f1) MB): $(measure "$REPRISE" events reduce <"$work/events.json")"
echo "replay --each, $(du -m "$work/rows.csv" | cut -f1) MB CSV: $(REPRISE_STORE="$work/store.sqlite" measure "$REPRISE" replay no-such-recording --each "$work/rows.csv")"
grep -q "no-such-recording" "$work/err" || { echo "the --each run did not get past the rows: $(cat "$work/err")"; exit 1; }
