#!/usr/bin/env python3
"""Score what 'vramtrace analyze --batch N' predicts would fit against jobs whose largest batch is known.

score_fit.py --fitgen BIN --vramtrace BIN [--split dev|blind|all|look] [--seed N] [--only NAME] [--out DIR]
             [--tolerance FRACTION] [--json FILE] [--min-within N] [--max-error FRACTION]

fitgen (tests/accuracy/fitgen.c) writes each case's trace at a batch below the true boundary with
its truth; this runs 'analyze --batch N --format json' on it and compares the predicted largest
batch (devices[].fit.max_batch of the device that peaks highest) with the true one: a point is
right within the tolerance (default 5 %), a range (fit.max_is_lower_bound: segment level, with
fit.upper_batch its upper estimate where told) when its lower bound is no more than the truth and
its upper estimate no less (each by the tolerance: the allocator's rounding). Where the case also
knows the truth of the same job with expandable segments (expandable_true_max_batch: a history
case without them), the expandable_segments saving's batch (fit.expandable_max_batch) is scored
too: the case is right only when that batch is within the tolerance as well, or, where the report
tells none, when expandable segments do not run a batch larger than the tolerance allows. Prints
one line per case, the worst error of a point and how many ranges hold the truth; exits
0 when every case (or --min-within N of them) is right and no point is further off than
--max-error, 1 otherwise, 2 on bad arguments, 3 when fitgen or vramtrace fails.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fitgen", required=True)
    ap.add_argument("--vramtrace", required=True)
    ap.add_argument("--split", default="dev", choices=["dev", "blind", "all", "look"])
    ap.add_argument("--seed", type=int, help="the look split's draw (fitgen --seed)")
    ap.add_argument("--only")
    ap.add_argument("--out")
    ap.add_argument("--tolerance", type=float, default=0.05)
    ap.add_argument("--json")
    ap.add_argument("--min-within", type=int, help="pass when at least this many cases are within the tolerance")
    ap.add_argument("--max-error", type=float, help="and no case is further off than this fraction")
    a = ap.parse_args()
    out = a.out or tempfile.mkdtemp(prefix="vt-fit-")
    cmd = [a.fitgen, "--split", a.split] + (["--only", a.only] if a.only else []) + \
        (["--seed", str(a.seed)] if a.seed is not None else []) + [out]
    if subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode != 0:
        print("score_fit: fitgen failed", file=sys.stderr)
        return 3
    rows, worst = [], 0.0
    for name in sorted(os.listdir(out)):
        tp = os.path.join(out, name, "truth.json")
        if not os.path.exists(tp):
            continue
        truth = json.load(open(tp))
        trace = os.path.join(out, name, truth["trace"])
        p = subprocess.run([a.vramtrace, "analyze", "--batch", str(truth["batch"]), "--format", "json", trace],
                           capture_output=True, text=True)
        if p.returncode not in (0, 1):
            print("score_fit: vramtrace analyze %s failed: %s" % (trace, p.stderr.strip()), file=sys.stderr)
            return 3
        rep = json.loads(p.stdout)
        devs = [d for d in rep["traces"][0]["devices"] if d["id"] >= 0 and d.get("fit")]
        dev = max(devs, key=lambda d: d["peak_bytes"]) if devs else None
        pred = dev["fit"]["max_batch"] if dev else None
        lower = bool(dev and dev["fit"].get("max_is_lower_bound"))
        upper = dev["fit"].get("upper_batch") if lower else None
        true = truth["true_max_batch"]
        err = abs(pred - true) / true if pred is not None else None
        exp_true = truth.get("expandable_true_max_batch")
        exp_pred = dev["fit"].get("expandable_max_batch") if dev else None
        exp_err = (exp_pred - exp_true) / exp_true if exp_true and exp_pred is not None else None
        if not lower and (err is None or err > worst):
            worst = err if err is not None else float("inf")
        rows.append({"case": name, "split": truth["split"], "mode": truth["mode"], "batch": truth["batch"],
                     "true_max_batch": true, "predicted_max_batch": pred, "error": err,
                     "lower_bound": lower, "upper_estimate": upper,
                     "upper_error": (upper - true) / true if upper is not None else None,
                     "expandable_true_max_batch": exp_true, "expandable_predicted": exp_pred,
                     "expandable_error": exp_err,
                     "bound_holds": (pred is not None and pred <= true * (1 + a.tolerance)) if lower else None,
                     "range_holds": (pred is not None and pred <= true * (1 + a.tolerance) and
                                     (upper is None or upper >= true * (1 - a.tolerance))) if lower else None,
                     "unknown_share": (sum(x["bytes"] for x in dev["breakdown"] if x["category"] == "unknown")
                                       / dev["breakdown_bytes"]) if dev else None})
    print("%-28s %-6s %-9s %6s %6s %6s %7s %6s %7s %-11s %s" % ("case", "split", "mode", "batch", "true", "pred",
                                                             "error", "upper", "up err", "range holds",
                                                             "expandable: true pred error"))
    for r in rows:
        print("%-28s %-6s %-9s %6d %6d %6s %7s %6s %7s %-11s %s" % (
              r["case"], r["split"], r["mode"], r["batch"], r["true_max_batch"],
              r["predicted_max_batch"] if r["predicted_max_batch"] is not None else "-",
              "%.1f%%" % (100 * r["error"]) if r["error"] is not None else "-",
              r["upper_estimate"] if r["upper_estimate"] is not None else "-",
              "%+.1f%%" % (100 * r["upper_error"]) if r["upper_error"] is not None else "-",
              "-" if r["range_holds"] is None else "yes" if r["range_holds"] else "no",
              "" if r["expandable_true_max_batch"] is None else "%d %s %s" % (
                  r["expandable_true_max_batch"],
                  r["expandable_predicted"] if r["expandable_predicted"] is not None else "-",
                  "%+.1f%%" % (100 * r["expandable_error"]) if r["expandable_error"] is not None else "-")))
    # a point is right within the tolerance; a range (segment level) when it holds the truth
    # the saving's batch, where it is told, within the tolerance; where expandable segments run a batch
    # larger than the tolerance allows, the saving must be told
    n_ok = sum(1 for r in rows if (r["range_holds"] if r["lower_bound"] else
                                   r["error"] is not None and r["error"] <= a.tolerance) and
               (abs(r["expandable_error"]) <= a.tolerance if r["expandable_error"] is not None else
                not r["expandable_true_max_batch"] or
                r["expandable_true_max_batch"] <= r["true_max_batch"] * (1 + a.tolerance)))
    n_range = sum(1 for r in rows if r["lower_bound"])
    print("right (points within %.0f%%, ranges holding): %d of %d; worst error of a point %s; ranges holding the "
          "truth %d of %d (%d with an upper estimate)" % (
              100 * a.tolerance, n_ok, len(rows), "%.1f%%" % (100 * worst) if worst != float("inf") else "no prediction",
              sum(1 for r in rows if r["range_holds"]), n_range,
              sum(1 for r in rows if r["upper_estimate"] is not None)))
    exp = [r for r in rows if r["expandable_true_max_batch"] is not None]
    if exp:
        print("the expandable_segments saving's batch against the same job's truth with them: %d of %d within %.0f%%, "
              "%d not replayed" % (sum(1 for r in exp if r["expandable_error"] is not None and
                                       abs(r["expandable_error"]) <= a.tolerance), len(exp), 100 * a.tolerance,
                                   sum(1 for r in exp if r["expandable_error"] is None)))
    if a.json:
        json.dump({"tolerance": a.tolerance, "cases": rows, "within": n_ok, "total": len(rows)}, open(a.json, "w"),
                  indent=1)
    need = a.min_within if a.min_within is not None else len(rows)
    bad = worst > a.max_error if a.max_error is not None else False
    return 0 if rows and n_ok >= need and not bad else 1


if __name__ == "__main__":
    sys.exit(main())
