/* Report: one self-contained interactive HTML file: findings first, a zoomable memory chart per process (inlined script). */
#include "report.h"

#include <stdlib.h>
#include <string.h>

#include "html_assets.h" /* vt__html_js, vt__html_css: html_view.js and html_view.css */

/*
 * The page is plain HTML (findings, facts, tables: readable without the script and in print)
 * and one JSON object, the figures the script draws: per process its devices' live bytes per
 * timeline bucket (highest, lowest, last), the curves of their largest sites, what was live at
 * each peak, phases, OOMs; and the findings with their times. Every figure comes from the
 * analysis result; this file only chooses what to send and downsamples curves for small charts.
 * Times are nanoseconds from the trace's start (the origin every report prints times from).
 */
#define RANKS_FULL 8      /* more processes than this: a small chart each, full sections for the outliers only */
#define RANKS_OUTLIERS 8
#define FINDINGS_FULL 100 /* beyond RANKS_FULL processes: findings detailed, the rest counted */
#define SMALL_POINTS 80   /* points of a small chart (VT_TIMELINE_BUCKETS / SMALL_POINTS buckets each) */
#define PARTS_MAX 8       /* sites shown in a peak's breakdown; the others together */

/* A JSON string literal of z fit for a <script> element. */
static void jstr(FILE *f, const char *z)
{
    fputc('"', f);
    if (z) vt__put_text(f, z, VT_ESC_JSON_SCRIPT);
    fputc('"', f);
}

/* A JSON number, or null when v is negative (unknown). */
static void jnum(FILE *f, int64_t v)
{
    if (v < 0) fputs("null", f);
    else fprintf(f, "%lld", (long long)v);
}

/* Time ts of trace t from the one time origin of the traces reported (figures.h), or -1 when unknown. */
static int64_t rel(const struct vt_trace *t, int64_t ts)
{
    return vt__fig_at(&t->f, ts);
}

/* The index in the trace's JSON site list of site s (aMap: site -> list index, -1 not yet; *pn listed so far). */
static int site_ref(int *aMap, int *pn, int s)
{
    if (s < 0) return -1;
    if (aMap[s] < 0) aMap[s] = (*pn)++;
    return aMap[s];
}

/*
 * The buckets of dv as JSON arrays "max", "min", "last" of nOut points (nOut divides
 * VT_TIMELINE_BUCKETS): each point the highest of its buckets' highs, the lowest of their
 * lows, the last of their ends; null where no event fell in them.
 */
static void curve_json(FILE *f, const struct vt_device *dv, int nOut)
{
    static const char *azName[] = {"max", "min", "last"};
    int w = VT_TIMELINE_BUCKETS / nOut;
    fprintf(f, ",\"n\":%d", nOut);
    for (int a = 0; a < 3; a++) {
        fprintf(f, ",\"%s\":[", azName[a]);
        for (int k = 0; k < nOut; k++) {
            int64_t v = -1;
            for (int j = k * w; j < (k + 1) * w; j++) {
                int64_t x = a == 0 ? dv->aMax[j] : a == 1 ? dv->aMin[j] : dv->aLast[j];
                if (x < 0) continue;
                if (v < 0 || a == 2 || (a == 0 && x > v) || (a == 1 && x < v)) v = x;
            }
            if (k) fputc(',', f);
            jnum(f, v);
        }
        fputc(']', f);
    }
}

/*
 * What was live at dv's peak as a breakdown: its largest groups (by site and kind), the other
 * groups together, and the rest of the peak no group holds (an allocator's cache beside its
 * blocks, the groups' bound). Items: label, bytes, site reference (null: not one site), text.
 */
static void parts_json(FILE *f, const struct vt_trace *t, const struct vt_device *dv, int *aMap, int *pnSite)
{
    int64_t sum = 0, other = 0;
    int nOther = 0;
    char z[600];
    fputs(",\"parts\":{\"by\":\"site\",\"total\":", f);
    jnum(f, dv->peak);
    fputs(",\"items\":[", f);
    for (int k = 0; k < dv->nGroup; k++) {
        const struct vt_group *g = &dv->aGroup[k];
        sum += g->bytes;
        if (k >= PARTS_MAX) {
            other += g->bytes;
            nOther++;
            continue;
        }
        vt__fmt_group(t, g, z, sizeof z);
        fputs(k ? ",{\"label\":" : "{\"label\":", f);
        jstr(f, g->site >= 0 ? t->sites.a[g->site].zSite : "unknown site");
        fprintf(f, ",\"bytes\":%lld,\"s\":%d,\"text\":", (long long)g->bytes, site_ref(aMap, pnSite, g->site));
        jstr(f, z);
        fputc('}', f);
    }
    if (nOther) {
        snprintf(z, sizeof z, "%d more group%s (by site and kind)", nOther, nOther == 1 ? "" : "s");
        fputs(",{\"label\":\"other sites\",\"bytes\":", f);
        jnum(f, other);
        fputs(",\"s\":null,\"text\":", f);
        jstr(f, z);
        fputc('}', f);
    }
    if (dv->peak > sum && dv->nGroup > 0) {
        fputs(",{\"label\":\"rest of the peak\",\"bytes\":", f);
        jnum(f, dv->peak - sum);
        fputs(",\"s\":null,\"rest\":1,\"text\":\"live at the peak but in none of the groups above (such as a caching "
              "allocator's reserve beside its blocks)\"}", f);
    }
    fputs("]}", f);
}

/* Device account dv of trace t as JSON: identity, capacity, peak, curve (full or small), site curves, breakdown. */
static void device_json(FILE *f, const struct vt_trace *t, const struct vt_device *dv, int bFull, int *aMap, int *pnSite)
{
    char z[160];
    fprintf(f, "{\"id\":%d,\"host\":%s,\"name\":", dv->id, dv->id < 0 ? "true" : "false");
    jstr(f, vt__fmt_device(dv, z, sizeof z));
    fputs(",\"cap\":", f);
    jnum(f, dv->id >= 0 && dv->totalBytes > 0 ? dv->totalBytes : -1);
    fputs(",\"peak\":", f);
    jnum(f, dv->peak);
    fputs(",\"peakT\":", f);
    jnum(f, dv->peak > 0 ? rel(t, dv->peakTs) : -1);
    curve_json(f, dv, bFull ? VT_TIMELINE_BUCKETS : SMALL_POINTS);
    if (!bFull) {
        fputc('}', f);
        return;
    }
    fputs(",\"curves\":[", f);
    for (int k = 0; k < dv->nSite; k++) {
        const struct vt_sitecurve *s = &dv->aSite[k];
        fprintf(f, "%s{\"s\":%d,\"peak\":%lld,\"p\":[", k ? "," : "", site_ref(aMap, pnSite, s->site),
                (long long)s->peak);
        for (int j = 0; j < s->n; j++)
            fprintf(f, "%s%d,%lld,%lld", j ? "," : "", s->a[j].bucket, (long long)s->a[j].max, (long long)s->a[j].last);
        fputs("]}", f);
    }
    fputc(']', f);
    parts_json(f, t, dv, aMap, pnSite);
    fputc('}', f);
}

/*
 * Trace i as JSON: its name, duration, whether memory is known, devices, phases, OOMs (each
 * with the finding it belongs to), and the site names its curves and breakdowns refer to.
 * bFull: every bucket and the site curves; else a small chart's points. pDev: its peak's difference from the
 * median as a fraction of it (NULL: not known, or one process); bOut: marked as far from the median. -1 when
 * out of memory.
 */
static int trace_json(FILE *f, const struct vt_result *r, int i, int bFull, const double *pDev, int bOut)
{
    const struct vt_trace *t = &r->aTrace[i];
    int *aMap = malloc(sizeof(int) * (size_t)(t->sites.n + 1)), nSite = 0;
    char z[300];
    if (!aMap) return -1;
    for (int k = 0; k < t->sites.n; k++) aMap[k] = -1;
    fputs("{\"name\":", f);
    jstr(f, vt__fmt_process(t, z, sizeof z));
    fputs(",\"rank\":", f);
    if (t->f.zRank[0]) jstr(f, t->f.zRank);
    else fputs("null", f);
    fprintf(f, ",\"full\":%s,\"mem\":%s,\"dur\":", bFull ? "true" : "false", vt__memory_known(t) ? "true" : "false");
    jnum(f, rel(t, t->f.t1)); /* the chart spans the origin to this trace's end; its buckets begin at "off" */
    fputs(",\"off\":", f);
    jnum(f, rel(t, t->f.t0));
    fputs(",\"peak\":", f);
    jnum(f, vt__fig_trace_peak(&t->f)); /* the headline peak (figures.h) */
    if (pDev) fprintf(f, ",\"dev\":%.4f", *pDev);
    fprintf(f, ",\"out\":%s,\"devs\":[", bOut ? "true" : "false");
    for (int d = 0, n = 0; d < t->tl.nDev; d++) {
        if (t->tl.aDev[d].peak <= 0) continue;
        if (n++) fputc(',', f);
        device_json(f, t, &t->tl.aDev[d], bFull, aMap, &nSite);
    }
    fputs("],\"phases\":[", f);
    for (int k = 0; k < t->ph.n; k++) {
        const struct vt_phase *p = &t->ph.a[k];
        fputs(k ? ",{\"name\":" : "{\"name\":", f);
        jstr(f, p->zName);
        fprintf(f, ",\"kind\":\"%s\",\"t0\":", vt__phase_kind_name(p->kind));
        jnum(f, rel(t, p->start));
        fputs(",\"t1\":", f);
        jnum(f, rel(t, p->end));
        fputc('}', f);
    }
    fputs("],\"ooms\":[", f);
    for (int k = 0; k < t->nOom; k++) {
        const struct vt_oom *o = &t->aOom[k];
        int iFind = -1;
        for (int j = 0; j < r->nFind; j++) { /* the OOM finding it belongs to: its times here (another process's: from its first) */
            const struct vt_finding *x = &r->aFind[j];
            int64_t ts = vt__finding_first_on(x, i);
            if (strcmp(x->zKind, "oom") || ts < 0 || ts > o->ts) continue;
            if (x->trace != i || o->ts <= x->lastTs) iFind = j;
        }
        fprintf(f, "%s{\"t\":", k ? "," : "");
        jnum(f, rel(t, o->ts));
        fputs(",\"req\":", f);
        jnum(f, o->requested);
        fprintf(f, ",\"dev\":%d,\"f\":%d}", o->device, iFind);
    }
    fputs("],\"sites\":[", f);
    for (int n = 0; n < nSite; n++) /* in the order referred to */
        for (int k = 0; k < t->sites.n; k++)
            if (aMap[k] == n) {
                if (n) fputc(',', f);
                jstr(f, t->sites.a[k].zSite);
            }
    fputs("]}", f);
    free(aMap);
    return 0;
}

/* Finding i as JSON: number, severity, kind, title, site, bytes, and where and when it occurred on each process. */
static void finding_json(FILE *f, const struct vt_result *r, int i)
{
    const struct vt_finding *x = &r->aFind[i];
    const struct vt_trace *t = &r->aTrace[x->trace];
    fprintf(f, "{\"n\":%d,\"sev\":\"%s\",\"kind\":", i + 1, vt__sev_name(x->severity));
    jstr(f, x->zKind);
    fputs(",\"title\":", f);
    jstr(f, x->zTitle);
    fputs(",\"site\":", f);
    jstr(f, x->zSite);
    fprintf(f, ",\"dev\":%d,\"bytes\":", x->device);
    jnum(f, x->bytes);
    fprintf(f, ",\"tr\":%d,\"t0\":", x->trace);
    jnum(f, rel(t, x->firstTs));
    fputs(",\"t1\":", f);
    jnum(f, rel(t, x->lastTs));
    fputs(",\"on\":[", f);
    for (int k = 0, n = 0; k < r->nTrace; k++) { /* each process it occurred on, with its first time there */
        int64_t ts;
        if (!vt__finding_on(x, k)) continue;
        ts = vt__finding_first_on(x, k);
        fprintf(f, "%s%d,", n++ ? "," : "", k);
        jnum(f, rel(&r->aTrace[k], ts));
    }
    fputs("]}", f);
}

/* Under trace t's chart: allocated by tensors, reserved and device used at each device's peak (when both levels are known). */
static void reconcile(FILE *f, const struct vt_trace *t)
{
    char z[600];
    for (int d = 0; d < t->tl.nDev; d++) {
        if (!vt__fmt_reconcile(t, &t->tl.aDev[d], z, sizeof z)) continue;
        fprintf(f, "<p><em>device %d, allocated / reserved / device used:</em> ", t->tl.aDev[d].id);
        vt__put_text(f, z, VT_ESC_HTML);
        fputs("</p>\n", f);
    }
}

/* Under trace t's chart: each account's peaks (the figure source's), and what was live at them by site and kind. */
static void peaks(FILE *f, const struct vt_result *r, const struct vt_trace *t)
{
    int bHead = 0;
    for (int d = 0; d < t->f.fig.nDev; d++) {
        const struct vt_figdev *fd = &t->f.fig.aDev[d];
        const struct vt_device *dv = vt__report_device(t, fd->acct);
        char zD[300], zP[600], zG[600];
        if (!bHead++)
            fputs("<table class=\"peaks\"><tr><th>memory</th><th>peak</th><th>live at peak, by site and kind</th></tr>\n",
                  f);
        fputs("<tr><td>", f);
        vt__put_text(f, vt__fmt_account(t, fd->acct, zD, sizeof zD), VT_ESC_HTML);
        fputs("</td><td>", f);
        vt__put_text(f, vt__fig_peak_text(&t->f, fd, zP, sizeof zP), VT_ESC_HTML);
        fputs("</td><td>", f);
        for (int k = 0; dv && k < vt__report_groups(r, dv); k++) {
            if (!k && vt__fmt_atpeak(t, dv, zG, sizeof zG)[0]) fprintf(f, "%s:<br>", zG); /* the breakdown's moment */
            vt__fmt_group(t, &dv->aGroup[k], zG, sizeof zG);
            fputs(k ? "<br>" : "", f);
            vt__put_text(f, zG, VT_ESC_HTML);
        }
        fputs("</td></tr>\n", f);
    }
    if (bHead) fputs("</table>\n", f);
}

/* Under trace t's chart: its phases with their peaks and the largest group live at each, or why there are none. */
static void phases(FILE *f, const struct vt_trace *t)
{
    char zA[32], zZ[32], zB[32], zG[600];
    if (!t->ph.n) {
        vt__fmt_no_phases(t, zG, sizeof zG);
        fputs("<p><em>phases:</em> ", f);
        vt__put_text(f, zG, VT_ESC_HTML);
        fputs("</p>\n", f);
        return;
    }
    fputs("<table class=\"phases\"><tr><th>phase</th><th>kind</th><th>start</th><th>end</th><th>peak</th>"
          "<th>iterations</th><th>largest at its peak</th></tr>\n", f);
    for (int k = 0; k < t->ph.n; k++) {
        const struct vt_phase *p = &t->ph.a[k];
        vt__fig_fmt_bound(&t->f, p->start, -1, zA, sizeof zA); /* widened: a window to paste into export --from/--to */
        vt__fig_fmt_bound(&t->f, p->end, +1, zZ, sizeof zZ);
        vt__fmt_phase_peak(t, p, zB, sizeof zB);
        fputs("<tr><td>", f);
        vt__put_text(f, p->zName, VT_ESC_HTML);
        fprintf(f, "</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%d</td><td>", vt__phase_kind_name(p->kind), zA,
                zZ, zB, p->nIter);
        if (p->nGroup > 0) {
            vt__fmt_group(t, &p->aGroup[0], zG, sizeof zG);
            vt__put_text(f, zG, VT_ESC_HTML);
        }
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

/* Why trace t's chart is missing or partial, said where the chart would be (nothing when it is whole). */
static void chart_missing(FILE *f, const struct vt_trace *t)
{
    if (!vt__memory_known(t) && t->f.fig.level == VT_LEVEL_TOTALS)
        fputs("<p class=\"missing\">No memory chart: this trace's memory events carry no address (torch.profiler "
              "before 1.11), so no allocation can be paired with its free and its live memory over time is unknown: "
              "only the running sum of their bytes, whose peak the table below gives. The notes below say what the "
              "file holds.</p>\n", f);
    else if (!vt__memory_known(t))
        fputs("<p class=\"missing\">No memory chart: this trace records no allocation with its size (an import from a "
              "file without memory events, such as a torch.profiler trace recorded without profile_memory=True or an "
              "Nsight export without --cuda-memory-usage), so its live memory is unknown. The notes below say what "
              "the file holds.</p>\n", f);
    else if (!t->f.bTimes)
        fputs("<p class=\"missing\">No memory chart: no event of this trace has a known time, so its memory cannot be "
              "placed in time; the peaks below are its figures.</p>\n", f);
    else if (t->tl.bSiteCurvesPartial)
        fputs("<p class=\"missing\">The sites' curves stop early: this trace has more allocation changes than the "
              "report keeps per site; the device curves are whole.</p>\n", f);
}

/* The facts line of trace t: file, duration, allocations, phases and where they came from. */
static void facts(FILE *f, const struct vt_trace *t)
{
    char zA[32], zP[600];
    fputs("<p class=\"facts\"><code>", f);
    vt__put_text(f, t->f.zPath, VT_ESC_HTML);
    fputs("</code>, ", f);
    if (t->f.fig.duration >= 0) fprintf(f, "duration %s; ", vt__fmt_ns(t->f.fig.duration, zA, sizeof zA));
    else fputs("duration unknown; ", f);
    if (vt__fig_counts_unknown(&t->f)) fprintf(f, "%s; level: %s. ", vt__fig_counts_unknown(&t->f), vt__level_name(t->f.fig.level));
    else
        fprintf(f, "%lld allocations, %lld live %s; level: %s. ", (long long)t->lc.nAlloc, (long long)t->lc.nLiveEnd,
                vt__end_said(t), vt__level_name(t->f.fig.level));
    if (t->ph.n) fprintf(f, "Phases from %s.</p>\n", t->ph.zSource);
    else {
        vt__fmt_no_phases(t, zP, sizeof zP);
        fputs("Phases: ", f);
        vt__put_text(f, zP, VT_ESC_HTML);
        fputs(".</p>\n", f);
    }
}

/* The section of trace i: heading, facts, chart (drawn by the script), breakdown, peaks, phases, notes, sites. */
static int trace_section(FILE *f, const struct vt_result *r, int i)
{
    const struct vt_trace *t = &r->aTrace[i];
    char zB[32], zP[300];
    fprintf(f, "<section class=\"proc\" id=\"p%d\"><h2>Process ", i);
    vt__put_text(f, vt__fmt_process(t, zP, sizeof zP), VT_ESC_HTML);
    fputs("</h2>\n", f);
    facts(f, t);
    chart_missing(f, t);
    if (vt__memory_known(t) && t->f.bTimes) fprintf(f, "<div class=\"chart\" data-tr=\"%d\"></div>\n", i);
    if (vt__memory_known(t)) fprintf(f, "<div class=\"parts\" data-tr=\"%d\"></div>\n", i);
    reconcile(f, t);
    vt__html_trace_breakdowns(f, t); /* what each peak was (bdbar.c) */
    peaks(f, r, t);
    phases(f, t);
    for (int k = 0; k < t->f.nNote; k++) {
        fputs("<p class=\"note\"><em>note:</em> ", f);
        vt__put_text(f, t->f.azNote[k], VT_ESC_HTML);
        fputs("</p>\n", f);
    }
    if (r->pOpts->bBySite && t->sites.n) {
        int *aIdx, nShown = vt__report_sites(r, t, &aIdx);
        if (nShown < 0) return -1;
        fputs("<table class=\"sites\"><tr><th>site</th><th>allocations</th><th>total</th><th>peak live</th><th>live at exit</th></tr>\n", f);
        for (int k = 0; k < nShown; k++) {
            const struct vt_site *st = &t->sites.a[aIdx[k]];
            char zPk[32], zE[32];
            vt__fmt_bytes(st->totalBytes, zB, sizeof zB);
            vt__fmt_bytes(st->peakLiveBytes, zPk, sizeof zPk);
            vt__fmt_bytes(st->liveBytes, zE, sizeof zE);
            fputs("<tr><td><code>", f);
            vt__put_text(f, st->zSite, VT_ESC_HTML);
            fprintf(f, "</code></td><td>%lld</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", (long long)st->nAlloc, zB,
                    zPk, zE);
        }
        fputs("</table>\n", f);
        free(aIdx);
    }
    fputs("</section>\n", f);
    return 0;
}

/* One line of the HTML table of processes: the process, its device peak against the median, findings. */
static void rank_row(FILE *f, const struct vt_result *r, int i, int64_t median)
{
    const struct vt_trace *t = &r->aTrace[i];
    int worst, n = vt__trace_findings(r, i, &worst);
    int64_t peak = vt__fig_trace_peak(&t->f); /* the headline peak (figures.h) */
    char zB[32], zD[40], zP[300];
    vt__fmt_bytes(peak, zB, sizeof zB);
    if (median > 0 && peak >= 0)
        snprintf(zD, sizeof zD, "%+.1f %%", 100.0 * (double)(peak - median) / (double)median);
    else snprintf(zD, sizeof zD, "-");
    if (peak < 0) snprintf(zB, sizeof zB, "unknown"); /* no memory data: not 0 */
    fputs("<tr><td>", f);
    vt__put_text(f, vt__fmt_process(t, zP, sizeof zP), VT_ESC_HTML);
    fprintf(f, "</td><td>%s</td><td>%s</td><td>%d</td><td>%s</td></tr>\n", zB, zD, n, worst >= 0 ? vt__sev_name(worst) : "-");
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/*
 * The processes side by side: the imbalance of their device peaks (lowest, median, highest,
 * spread), a small chart each on one scale (drawn by the script), and the table of processes.
 */
static void ranks_section(FILE *f, const struct vt_result *r, const int64_t *aPeak, int64_t median)
{
    int64_t sum = 0;
    int iMin = 0, iMax = 0;
    char zMin[32], zMed[32], zMax[32], zS[32], zP[300];
    for (int i = 0; i < r->nTrace; i++) {
        sum += aPeak[i];
        if (aPeak[i] < aPeak[iMin]) iMin = i;
        if (aPeak[i] > aPeak[iMax]) iMax = i;
    }
    vt__fmt_bytes(aPeak[iMin], zMin, sizeof zMin);
    vt__fmt_bytes(median, zMed, sizeof zMed);
    vt__fmt_bytes(aPeak[iMax], zMax, sizeof zMax);
    vt__fmt_bytes(aPeak[iMax] - aPeak[iMin], zS, sizeof zS);
    fprintf(f, "<section id=\"ranks\"><h2>All %d processes</h2>\n<p class=\"imbalance\">%s: lowest %s (", r->nTrace,
            vt__result_one_job(r) ? "Imbalance of the device peaks"
                                  : "Device peaks (processes of different programs or runs, which need not peak alike)",
            zMin);
    vt__put_text(f, vt__fmt_process(&r->aTrace[iMin], zP, sizeof zP), VT_ESC_HTML);
    fprintf(f, "), median %s, highest %s (", zMed, zMax);
    vt__put_text(f, vt__fmt_process(&r->aTrace[iMax], zP, sizeof zP), VT_ESC_HTML);
    fprintf(f, "); spread %s", zS);
    if (median > 0) fprintf(f, " (%.1f %% of the median)", 100.0 * (double)(aPeak[iMax] - aPeak[iMin]) / (double)median);
    vt__fmt_bytes(sum, zS, sizeof zS);
    fprintf(f, ". Sum of per-process device peaks: %s.</p>\n", zS);
    fputs("<p class=\"hint\">Each process's largest device over its run, all on one scale; the dotted line is the "
          "median peak, a red frame marks the processes farthest from it. Click a chart to open it.</p>\n"
          "<div class=\"grid\" id=\"grid\"></div>\n<details><summary>Table of processes</summary>\n"
          "<table class=\"procs\"><tr><th>process</th><th>device peak</th><th>vs median</th><th>findings</th>"
          "<th>worst</th></tr>\n", f);
    for (int i = 0; i < r->nTrace; i++) rank_row(f, r, i, median);
    fputs("</table></details></section>\n", f);
}

/* Finding i in full, anchored as f<i+1>. */
static void finding_div(FILE *f, const struct vt_result *r, int i)
{
    const struct vt_finding *x = &r->aFind[i];
    const struct vt_trace *t = &r->aTrace[x->trace];
    char zB[32], zA[80], zW[256];
    vt__fmt_finding_bytes(x, zB, sizeof zB);
    vt__fig_fmt_window(&t->f, x->firstTs, x->lastTs, zA, sizeof zA); /* the window to paste into export --from/--to */
    fprintf(f, "<div class=\"finding %s\" id=\"f%d\" data-f=\"%d\"><h3><span class=\"sev %s\">%s</span> F%d %s: ",
            vt__sev_name(x->severity), i + 1, i, vt__sev_name(x->severity), vt__sev_name(x->severity), i + 1, x->zKind);
    vt__put_text(f, x->zTitle, VT_ESC_HTML);
    fputs("</h3>\n<p>", f);
    vt__fmt_ranks(r, x, zW, sizeof zW);
    if (zW[0]) vt__put_text(f, zW, VT_ESC_HTML);
    else vt__put_text(f, vt__fmt_process(t, zW, sizeof zW), VT_ESC_HTML);
    fprintf(f, "; %s; %lld event%s; <span class=\"when\">%s</span>", zB, (long long)x->count,
            x->count == 1 ? "" : "s", zA);
    if (x->zPhase[0]) {
        fputs("; phase ", f);
        vt__put_text(f, x->zPhase, VT_ESC_HTML);
    }
    vt__fmt_spread(x, zW, sizeof zW);
    if (zW[0]) {
        fputs("</p>\n<p><b>occurrences:</b> ", f);
        vt__put_text(f, zW, VT_ESC_HTML);
    }
    fputs("</p>\n<p><b>where:</b> <code>", f);
    vt__put_text(f, x->zSite, VT_ESC_HTML);
    fputs("</code></p>\n<p><b>evidence:</b> ", f);
    vt__put_text(f, x->zEvidence, VT_ESC_HTML);
    fputs("</p>\n<p><b>fix:</b> ", f);
    vt__put_text(f, x->zFix, VT_ESC_HTML);
    fputs("</p></div>\n", f);
}

/* Whether finding x occurred on a process drawn in full (abFull NULL: all are). */
static int shown(const struct vt_finding *x, const char *abFull)
{
    if (!abFull) return 1;
    if (!x->aTraces) return abFull[x->trace];
    for (int k = 0; k < x->nTraces; k++)
        if (abFull[x->aTraces[k]]) return 1;
    return 0;
}

/* Whether finding i is detailed: all of them, or with many processes the FINDINGS_FULL worst and those of the processes drawn in full. */
static int detailed(const struct vt_result *r, int i, const char *abFull)
{
    return i < FINDINGS_FULL || shown(&r->aFind[i], abFull);
}

/* The findings, worst first: those detailed in full, the others counted by kind and severity. */
static void findings(FILE *f, const struct vt_result *r, const char *abFull)
{
    int nLeft = 0;
    fputs("<section id=\"findings\"><h2>Findings (worst first)</h2>\n", f);
    if (!r->nFind) {
        char zNone[200];
        fputs("<p>", f);
        vt__put_text(f, vt__fmt_no_findings(r, zNone, sizeof zNone), VT_ESC_HTML);
        fputs("</p>\n", f);
    } else fputs("<p class=\"hint\">Click a finding to see it on its chart: the chart zooms to its time and draws its "
               "site's memory; a marker under a chart leads back here.</p>\n", f);
    for (int i = 0; i < r->nFind; i++) {
        if (detailed(r, i, abFull)) finding_div(f, r, i);
        else nLeft++;
    }
    if (nLeft) {
        fprintf(f, "<p>%d more finding%s (all in <code>--format json</code>):</p>\n<table><tr><th>kind</th><th>severity</th>"
                   "<th>findings</th><th>processes</th></tr>\n", nLeft, nLeft == 1 ? "" : "s");
        for (int i = 0; i < r->nFind; i++) { /* one row per (kind, severity), at its first occurrence */
            const struct vt_finding *x = &r->aFind[i];
            int n = 0, nProc = 0, bSeen = 0, iLast = -1;
            if (detailed(r, i, abFull)) continue;
            for (int j = FINDINGS_FULL; j < i && !bSeen; j++)
                bSeen = !detailed(r, j, abFull) && r->aFind[j].severity == x->severity && !strcmp(r->aFind[j].zKind, x->zKind);
            if (bSeen) continue;
            for (int j = i; j < r->nFind; j++)
                if (!detailed(r, j, abFull) && r->aFind[j].severity == x->severity && !strcmp(r->aFind[j].zKind, x->zKind)) {
                    n++;
                    if (r->aFind[j].aTraces) nProc += r->aFind[j].nTraces; /* grouped across processes */
                    else if (r->aFind[j].trace != iLast) nProc++;
                    iLast = r->aFind[j].trace;
                }
            fprintf(f, "<tr><td>%s</td><td>%s</td><td>%d</td><td>%d</td></tr>\n", x->zKind, vt__sev_name(x->severity), n,
                    nProc);
        }
        fputs("</table>\n", f);
    }
    fputs("</section>\n", f);
}

/*
 * The figures the script draws, as one JSON object in a <script type="application/json">:
 * every process (in full where abFull says, else a small chart's points; aDev: each one's
 * peak against the median), the detailed findings, the shared scale. -1 when out of memory.
 */
static int data_json(FILE *f, const struct vt_result *r, const char *abFull, const int64_t *aPeak, int64_t median,
                     const char *abOut)
{
    int64_t scale = 1;
    fputs("<script type=\"application/json\" id=\"vt-data\">{\"v\":1,\"traces\":[", f);
    for (int i = 0; i < r->nTrace; i++) {
        const struct vt_trace *t = &r->aTrace[i];
        int bDev = r->nTrace > 1 && median > 0 && vt__fig_trace_peak(&t->f) >= 0;
        double dev = bDev ? (double)(aPeak[i] - median) / (double)median : 0;
        for (int d = 0; d < t->tl.nDev; d++) {
            if (t->tl.aDev[d].peak > scale) scale = t->tl.aDev[d].peak;
            if (t->tl.aDev[d].id >= 0 && t->tl.aDev[d].totalBytes > scale) scale = t->tl.aDev[d].totalBytes;
        }
        if (i) fputc(',', f);
        if (trace_json(f, r, i, !abFull || abFull[i], bDev ? &dev : NULL, abOut && abOut[i])) return -1;
    }
    fputs("],\"finds\":[", f);
    for (int i = 0, n = 0; i < r->nFind; i++)
        if (detailed(r, i, abFull)) {
            if (n++) fputc(',', f);
            finding_json(f, r, i);
        }
    fprintf(f, "],\"scale\":%lld,\"median\":", (long long)scale);
    jnum(f, r->nTrace > 1 ? median : -1);
    fputs("}</script>\n", f);
    return 0;
}

/* The whole HTML report (inline CSS, inline script, no network); 0, or -1 on a write error or when out of memory. */
int vt__report_html(FILE *f, const struct vt_result *r)
{
    int64_t *aPeak = malloc(sizeof(int64_t) * (size_t)(r->nTrace + 1)), *aSorted = malloc(sizeof(int64_t) * (size_t)(r->nTrace + 1));
    char *abFull = NULL, *abOut = NULL;
    int64_t median = 0;
    int rc = -1, nOut = 0;
    if (!aPeak || !aSorted) goto done;
    for (int i = 0; i < r->nTrace; i++) { /* the headline peaks (figures.h); unknown counts as none here */
        int64_t peak = vt__fig_trace_peak(&r->aTrace[i].f);
        aSorted[i] = aPeak[i] = peak > 0 ? peak : 0;
    }
    qsort(aSorted, (size_t)r->nTrace, sizeof(int64_t), cmp_i64);
    if (r->nTrace) median = aSorted[r->nTrace / 2];
    if (r->nTrace > 1) { /* the processes farthest from the median peak are marked (and beyond RANKS_FULL drawn in full) */
        if (!(abOut = calloc((size_t)r->nTrace, 1))) goto done;
        while (nOut < RANKS_OUTLIERS) {
            int best = -1;
            int64_t bestDev = 0;
            for (int i = 0; i < r->nTrace; i++) {
                int64_t dev = aPeak[i] > median ? aPeak[i] - median : median - aPeak[i];
                if (!abOut[i] && dev > bestDev) best = i, bestDev = dev;
            }
            if (best < 0) break;
            abOut[best] = 1;
            nOut++;
        }
    }
    if (r->nTrace > RANKS_FULL) {
        if (!(abFull = calloc((size_t)r->nTrace, 1))) goto done;
        memcpy(abFull, abOut, (size_t)r->nTrace);
        if (!nOut) abFull[0] = 1;
    }
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
               "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>vramtrace analysis</title>\n"
               "<style>\n%s</style></head><body>\n<header><h1>vramtrace analysis</h1>\n", vt__html_css);
    fprintf(f, "<p>%d trace%s, %d finding%s.%s</p></header>\n", r->nTrace, r->nTrace == 1 ? "" : "s", r->nFind,
            r->nFind == 1 ? "" : "s", r->nTrace > 1 ? " Every chart has the same byte scale." : "");
    fputs("<noscript><p class=\"missing\">The charts are drawn by the page's script, which is off: the tables give "
          "every figure.</p></noscript>\n", f);
    findings(f, r, abFull);
    if (r->nTrace > 1) ranks_section(f, r, aPeak, median);
    if (abFull && nOut)
        fprintf(f, "<p class=\"hint\">The %d process%s whose peak is farthest from the median in full:</p>\n", nOut,
                nOut == 1 ? "" : "es");
    for (int i = 0; i < r->nTrace; i++)
        if (!abFull || abFull[i])
            if (trace_section(f, r, i)) goto done;
    if (data_json(f, r, abFull, aPeak, median, abOut)) goto done;
    fprintf(f, "<script>\n%s</script>\n</body></html>\n", vt__html_js);
    rc = ferror(f) ? -1 : 0;
done:
    free(aPeak);
    free(aSorted);
    free(abFull);
    free(abOut);
    return rc;
}
