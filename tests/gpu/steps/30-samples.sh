#!/usr/bin/env bash
# (c) each CUDA sample under `vramtrace record`: its known answer (gpu_check --verify), then analyze and info.
# timeout: 120
# min: 30
# Per sample NAME: NAME-PID.db (the trace), NAME.stdout/.stderr (the run), NAME.verify.txt
# (the known answer, line by line), NAME.analyze.txt/.json, NAME.info.txt; traces of at most
# 2 MB with their known answer and report go to keep/samples/.
. "$VT_TREE/tests/gpu/steps/lib.sh"
d=$VT_STEP_DIR
ok=() bad=() notrun=()
for bin in "$VT_CARRY"/samples/cuda/*; do
  name=$(basename "$bin")
  [ -x "$bin" ] || continue
  if [ "$(vt_left)" -lt 15 ]; then notrun+=("$name"); continue; fi
  info=$("$gpu_check" --info "$name")
  sig=$(echo "$info" | sed -n 's/^signal //p')
  setting=$(echo "$info" | sed -n 's/^env //p')
  want=0
  [ "${sig:-0}" != 0 ] && want=$((128 + sig))
  # shellcheck disable=SC2086  # setting is one NAME=VALUE word, or nothing
  timeout -k 5 "$(vt_limit 45)" env $setting VRAMTRACE_CUPTI="$VT_CUPTI_LIB" \
    "$vt" record -o "$d/$name-%p.db" -- "$bin" > "$d/$name.stdout" 2> "$d/$name.stderr" < /dev/null
  rc=$?
  traces=()
  for t in "$d/$name"-[0-9]*.db; do [ -f "$t" ] && traces+=("$t"); done
  fine=1
  vt_row "$name: record exit status" "$rc" "$want" || fine=0
  vt_row "$name: traces written" "${#traces[@]}" 1 || fine=0
  if [ "${#traces[@]}" = 1 ]; then
    t=${traces[0]}
    pid=${t##*-}
    pid=${pid%.db}
    "$gpu_check" --verify "$name" "$t" "$d/$name.stdout" "$pid" > "$d/$name.verify.txt" 2>&1
    vt_row "$name: known answer (gpu_check --verify)" "$?" 0 || fine=0
    "$vt" analyze --no-write "$t" > "$d/$name.analyze.txt" 2>&1
    "$vt" analyze --no-write --format json -o "$d/$name.analyze.json" "$t" 2> "$d/$name.analyze.err"
    "$vt" info "$t" > "$d/$name.info.txt" 2>&1
    if vt_keep_trace "$t" "samples/$name.db"; then
      cp "$d/$name.verify.txt" "$d/$name.analyze.json" "$d/$name.stdout" "$VT_KEEP/samples/" 2>/dev/null
    fi
  fi
  if [ "$fine" = 1 ]; then ok+=("$name"); else bad+=("$name"); fi
done
total=$(( ${#ok[@]} + ${#bad[@]} + ${#notrun[@]} ))
vt_summary "${#ok[@]} of $total samples hold their known answer under vramtrace record${bad:+; failed: ${bad[*]}}${notrun:+; not run (time): ${notrun[*]}}"
if [ "${#bad[@]}" = 0 ] && [ "${#notrun[@]}" = 0 ] && [ "$total" -gt 0 ]; then vt_status pass; else vt_status fail; fi
