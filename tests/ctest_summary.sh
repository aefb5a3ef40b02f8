#!/usr/bin/env bash
# One stage's ctest results for tests/run.sh: counts, and each skip with its reason.
#
# usage: tests/ctest_summary.sh BUILD_DIR CTEST_CONSOLE_LOG
#
# Prints "counts PASSED FAILED SKIPPED" on the first line, then one "skip NAME: REASON" line per
# skipped test (ctest's SKIPPED: exit code 77) and per skipped case inside a test program that
# passed (tests/vt_test.h prints "  skipped: REASON" then "skip   CASE"), then one "fail NAME"
# line per test that did not pass. The reason is the test's own "skipped: ..." line, else the last
# line it printed, taken from BUILD_DIR/Testing/Temporary/LastTest.log (ctest shows no output of a
# skipped test).
set -u
build=$1
console=$2
log="$build/Testing/Temporary/LastTest.log"

# ctest's console lines: "  3/90 Test  #3: name .......   Passed    1.2 sec" (or ***Failed,
# ***Skipped, ***Timeout, ***Exception: ..., ***Not Run).
awk '
    / Test +#[0-9]+: / {
        line = $0
        sub(/.* Test +#[0-9]+: /, "", line)
        name = line
        sub(/ .*/, "", name)
        if (line ~ /\*\*\*Skipped/ || line ~ / Skipped /) { skipped[name] = 1; nSkip++ }
        else if (line ~ / Passed /) nPass++
        else { failed[nFail++] = name }
    }
    END {
        printf "counts %d %d %d\n", nPass, nFail, nSkip
        for (n in skipped) print "skipped-test " n
        for (i = 0; i < nFail; i++) print "fail " failed[i]
    }
' "$console" >"$console.parsed"

head -1 "$console.parsed"
grep '^fail ' "$console.parsed"
# Reasons: the last "skipped:" line of each test's output; cases skipped inside passing programs.
awk -v list="$console.parsed" '
    BEGIN {
        while ((getline l < list) > 0)
            if (l ~ /^skipped-test /) { sub(/^skipped-test /, "", l); want[l] = 1 }
    }
    /^[0-9]+\/[0-9]+ Testing: / { name = $0; sub(/^[0-9]+\/[0-9]+ Testing: /, "", name); why = ""; last = ""; out = 0; next }
    /^Output:$/ { out = 1; next }
    /(^|[ :])skipped: / { why = $0; sub(/^.*skipped: /, "", why); next }
    /^skip +[^ ]+$/ { sub(/^skip +/, ""); if (!(name in want)) print "skip " name "/" $0 ": " (why != "" ? why : "(no reason given)"); next }
    /^<end of output>/ {
        if (why == "" && last != "") why = "(said last) " last
        if (name in want) { print "skip " name ": " (why != "" ? why : "(no reason given)"); done[name] = 1 }
        name = ""; out = 0
    }
    out && /[^ \t-]/ { last = $0 }
    END { for (n in want) if (!(n in done)) print "skip " n ": (no reason given)" }
' "$log" 2>/dev/null | sort
rm -f "$console.parsed"
