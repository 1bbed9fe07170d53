#!/usr/bin/env bash
# A recording edited as a program, on third-party GTK dialogs (zenity): a
# person types "999" into a "Target" entry, a "Source" dialog beside it, and
# presses OK. The steps are
# then edited, by file and in an editor, to wait for a "Source" dialog that
# opens late, read its total, check it, type the total read instead of 999
# and check the field before OK. Replayed where the total is right (the
# Target prints it) and where it is not (the check halts the run with both
# values, nothing typed). Mistaken steps files are refused with their line
# and field, the recording unchanged. Runs inside dbus-run-session on
# $DISPLAY; writes for each case NAME what Target printed (NAME.out), the
# exit code (NAME.code) and messages (NAME.err), and the steps and versions
# printed into $OUT.
set -euo pipefail
: "${REPRISE:?}" "${SCRIPTS:?}" "${OUT:?}"
source "$(dirname "$0")/recording.sh"
source "$(dirname "$0")/zenity.sh"

# dialogs NAME TOTAL DELAY: after DELAY seconds the Source dialog showing
# TOTAL, then a moment later the Target dialog, which prints what OK
# submits into $OUT/NAME.out.
dialogs() {
  sh -c "sleep $3; exec zenity --entry --title Source --text 'Invoice total' --entry-text '$2'" \
    >/dev/null 2>&1 &
  source_pid=$!
  sh -c "sleep $3; sleep 1.5; exec zenity --entry --title Target --text 'Copy here'" \
    >"$OUT/$1.out" 2>/dev/null &
  target_pid=$!
}

finish() {
  ended "$target_pid" 5
  kill "${source_pid:-}" 2>/dev/null || true
  pkill -f "zenity --entry --title (Source|Target)" 2>/dev/null || true
  wait 2>/dev/null || true
  source_pid=
}

# The person has the Source open beside the Target, and types 999.
dialogs recorded 555.00 0
WINDOW=Target find_element "push button" OK >/dev/null
start_recording copy
press $(WINDOW=Target find_element text "")
sleep 0.5
xdotool type --delay 80 999
sleep 0.5
press $(WINDOW=Target find_element "push button" OK)
stop_recording
finish

"$REPRISE" steps copy >"$OUT/steps-1.toml"
"$REPRISE" params copy --json >"$OUT/params.json"
# The parameter the typed 999 is (named after its field).
param=$(sed -n 's/^# \([a-z_0-9]*\) = "999"$/\1/p' "$OUT/steps-1.toml")

# The edit: before the recorded steps, wait for the late Source, read its
# total, check it; type the total instead of 999; check the field before OK.
edited() {
  sed -e "s/^# $param = \"999\"\$/$param = \"{total}\"/" "$OUT/steps-1.toml" | awk '
    /^\[\[step\]\]$/ && !done {
      print "[[step]]\nwait = { role = \"text field\", window = \"Source\", timeout = 20 }\n"
      print "[[step]]\nread = { role = \"text field\", window = \"Source\", into = \"total\" }\n"
      print "[[step]]\nassert = { role = \"text field\", window = \"Source\", near = 123.45, within = 0.005 }\n"
      done = 1
    }
    /^recorded = 3$/ {
      print "assert = { role = \"text field\", window = \"Target\", equals = \"{total}\" }\n\n[[step]]"
    }
    { print }'
}
edited >"$OUT/edited.toml"

# Mistakes, each refused with its line and field; nothing is saved.
mistake() { # NAME: $OUT/NAME.toml applied
  run_as $1 "$REPRISE" edit copy --file "$OUT/$1.toml"
}
sed 's/, timeout = 20 }/ }/' "$OUT/edited.toml" >"$OUT/unbounded.toml"
mistake unbounded
sed 's/"{total}"/"{totl}"/' "$OUT/edited.toml" >"$OUT/unknown.toml"
mistake unknown
sed 's/^wait = { role = "text field", window = "Source", timeout = 20 }/wait = { role = "text field", window = "Source", timeout = 20/' \
  "$OUT/edited.toml" >"$OUT/unclosed.toml"
mistake unclosed
"$REPRISE" versions copy --json >"$OUT/after-mistakes.versions"

# The same edit in an editor: the first save has a mistake (the editor
# opens again with it said at the top), the second is right.
cat >"$OUT/editor.sh" <<EOF
#!/bin/sh
n=\$(cat "$OUT/editor.rounds" 2>/dev/null || echo 0)
echo \$((n + 1)) >"$OUT/editor.rounds"
head -3 "\$1" >"$OUT/editor-\$n.head"
if [ "\$n" = 0 ]; then cp "$OUT/unbounded.toml" "\$1"; else cp "$OUT/edited.toml" "\$1"; fi
EOF
chmod +x "$OUT/editor.sh"
set +e
EDITOR="$OUT/editor.sh" "$REPRISE" edit copy --note "read the total" >"$OUT/edit.stdout" 2>"$OUT/edit.err"
echo $? >"$OUT/edit.code"
set -e
"$REPRISE" steps copy >"$OUT/steps-2.toml"
"$REPRISE" versions copy --json >"$OUT/edited.versions"
# Applying the same file again changes nothing.
"$REPRISE" edit copy --file "$OUT/edited.toml" >"$OUT/again.stdout"

# run NAME TOTAL: the dialogs (Source 3 s late), the newest version replayed.
run() {
  dialogs "$1" "$2" 3
  replay_as "$1" copy --json
  finish
}
run right 123.45
run wrong 99.10

# The total read as a secret (version 3; the Source's check no longer
# names the number): typed and checked as before, never shown by Reprise.
sed -e 's/into = "total" }/into = "total", secret = true }/' \
  -e 's/near = 123.45, within = 0.005/matches = "???.??"/' "$OUT/edited.toml" >"$OUT/secret.toml"
"$REPRISE" edit copy --file "$OUT/secret.toml" >/dev/null
"$REPRISE" steps copy >"$OUT/steps-3.toml"
dialogs hidden 123.45 3
replay_as hidden copy --json
"$REPRISE" report last -o "$OUT/hidden.html" >/dev/null
finish
