/* Report: one self-contained HTML file with an SVG memory timeline per process (no scripts, no network). */
#include "report.h"

#include <string.h>

#define SVG_W 960
#define SVG_H 260
#define PAD_L 70
#define PAD_B 24
#define PAD_T 16

static double xpos(const struct vt_trace *t, int64_t ts)
{
    double u = (double)(ts - t->f.t0) / (double)(t->f.t1 - t->f.t0 + 1);
    if (u < 0) u = 0;
    if (u > 1) u = 1;
    return PAD_L + u * (SVG_W - PAD_L - 10);
}

static double ypos(int64_t v, int64_t vmax)
{
    return PAD_T + (SVG_H - PAD_T - PAD_B) * (1.0 - (double)v / (double)(vmax > 0 ? vmax : 1));
}

/* Under trace t's timeline: allocated by tensors, reserved and device used at each device's peak (when both levels are known). */
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

/* The SVG timeline of trace i: phases shaded, live bytes per device, peak and OOMs marked. */
static void svg(FILE *f, const struct vt_result *r, int i)
{
    static const char *azColor[] = {"#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#17becf", "#7f7f7f"};
    const struct vt_trace *t = &r->aTrace[i];
    int64_t vmax = 1;
    char zB[32], zA[32];
    for (int d = 0; d < t->tl.nDev; d++)
        if (t->tl.aDev[d].peak > vmax) vmax = t->tl.aDev[d].peak;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "role=\"img\" aria-label=\"live memory over time\">\n", SVG_W, SVG_H, SVG_W, SVG_H);
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fafafa\" stroke=\"#ccc\"/>\n", PAD_L, PAD_T,
            SVG_W - PAD_L - 10, SVG_H - PAD_T - PAD_B);
    for (int k = 0; k < t->ph.n; k++) {
        const struct vt_phase *p = &t->ph.a[k];
        double x0 = xpos(t, p->start), x1 = xpos(t, p->end);
        fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\" opacity=\"0.35\"><title>",
                x0, PAD_T, x1 - x0 > 0.5 ? x1 - x0 : 0.5, SVG_H - PAD_T - PAD_B,
                p->kind == VT_PHASE_EVAL ? "#ffbb78" : p->kind == VT_PHASE_TRAIN ? "#aec7e8" : "#dddddd");
        vt__put_text(f, p->zName, VT_ESC_HTML);
        fprintf(f, " (%s)</title></rect>\n", vt__phase_kind_name(p->kind));
    }
    for (int g = 0; g <= 4; g++) {
        int64_t v = vmax * g / 4;
        vt__fmt_bytes(v, zB, sizeof zB);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\">%s</text>\n", PAD_L - 4,
                ypos(v, vmax) + 3, zB);
    }
    vt__fmt_ns(t->f.t1 - t->f.t0, zA, sizeof zA);
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\">0 s</text><text x=\"%d\" y=\"%d\" font-size=\"10\" "
               "text-anchor=\"end\">%s</text>\n", PAD_L, SVG_H - 8, SVG_W - 10, SVG_H - 8, zA);
    for (int d = 0; d < t->tl.nDev; d++) {
        const struct vt_device *dv = &t->tl.aDev[d];
        int64_t v = 0;
        if (dv->peak <= 0) continue;
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"%s points=\"",
                dv->id == -1 ? "#d62728" : dv->id == -2 ? "#e377c2" : azColor[d % 6],
                dv->id < 0 ? " stroke-dasharray=\"4 2\"" : "");
        for (int k = 0; k < VT_TIMELINE_BUCKETS; k++) { /* the bucket's highest level, then where it ended */
            double x = PAD_L + (double)k * (SVG_W - PAD_L - 10) / VT_TIMELINE_BUCKETS;
            if (dv->aMax[k] >= 0) {
                fprintf(f, "%.1f,%.1f ", x, ypos(v, vmax));
                fprintf(f, "%.1f,%.1f ", x, ypos(dv->aMax[k], vmax));
                v = dv->aLast[k];
                fprintf(f, "%.1f,%.1f ", x + (double)(SVG_W - PAD_L - 10) / VT_TIMELINE_BUCKETS, ypos(v, vmax));
            }
        }
        fprintf(f, "%d,%.1f", SVG_W - 10, ypos(v, vmax));
        if (dv->id >= 0) fprintf(f, "\"><title>device %d live bytes</title></polyline>\n", dv->id);
        else fprintf(f, "\"><title>%s live bytes</title></polyline>\n", dv->zName);
        if (dv->peakTs >= 0) {
            vt__fmt_bytes(dv->peak, zB, sizeof zB);
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"><title>peak %s", xpos(t, dv->peakTs),
                    ypos(dv->peak, vmax), dv->id == -1 ? "#d62728" : dv->id == -2 ? "#e377c2" : azColor[d % 6], zB);
            for (int k = 0; k < dv->nGroup && k < r->pOpts->nTop && k < 5; k++) { /* what was live, by site */
                char zG[600];
                vt__fmt_group(t, &dv->aGroup[k], zG, sizeof zG);
                fputs(k ? "; " : "; live: ", f);
                vt__put_text(f, zG, VT_ESC_HTML);
            }
            fprintf(f, "</title></circle><text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">peak %s</text>\n",
                    xpos(t, dv->peakTs) + 5, ypos(dv->peak, vmax) + 10, zB);
        }
    }
    for (int k = 0; k < t->nOom; k++) {
        int iFind = -1;
        for (int j = 0; j < r->nFind; j++)
            if (r->aFind[j].trace == i && !strcmp(r->aFind[j].zKind, "oom") && r->aFind[j].firstTs <= t->aOom[k].ts &&
                t->aOom[k].ts <= r->aFind[j].lastTs)
                iFind = j;
        vt__fmt_bytes(t->aOom[k].requested, zB, sizeof zB);
        if (iFind >= 0) fprintf(f, "<a href=\"#f%d\">", iFind + 1);
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#d62728\" stroke-width=\"2\"/>"
                   "<text x=\"%.1f\" y=\"%d\" font-size=\"10\" fill=\"#d62728\">OOM %s<title>out of memory: %s requested</title></text>",
                xpos(t, t->aOom[k].ts), xpos(t, t->aOom[k].ts), PAD_T, SVG_H - PAD_B, xpos(t, t->aOom[k].ts) + 3,
                PAD_T + 10, zB, zB);
        if (iFind >= 0) fputs("</a>", f);
        fputc('\n', f);
    }
    /* every other finding: a marker under the plot at its first time, linked to it */
    for (int j = 0; j < r->nFind; j++) {
        const struct vt_finding *x = &r->aFind[j];
        double cx;
        if (x->trace != i || x->firstTs < 0 || !strcmp(x->zKind, "oom")) continue;
        cx = xpos(t, x->firstTs);
        fprintf(f, "<a href=\"#f%d\"><polygon points=\"%.1f,%d %.1f,%d %.1f,%d\" fill=\"%s\"><title>", j + 1, cx,
                SVG_H - PAD_B, cx - 5, SVG_H - PAD_B + 8, cx + 5, SVG_H - PAD_B + 8,
                x->severity == VT_SEV_HIGH ? "#c0392b" : x->severity == VT_SEV_MEDIUM ? "#f39c12" : "#7f8c8d");
        vt__put_text(f, x->zTitle, VT_ESC_HTML);
        fputs("</title></polygon></a>\n", f);
    }
    fputs("</svg>\n", f);
}

/* The whole HTML report (inline CSS, SVG, no script); 0, or -1 on a write error. */
int vt__report_html(FILE *f, const struct vt_result *r)
{
    char zB[32], zA[32], zZ[32];
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>vramtrace analysis</title>\n"
          "<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:1000px;color:#222}"
          "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 6px;text-align:left;font-size:90%}"
          ".high{color:#fff;background:#c0392b}.medium{background:#f39c12}.low{background:#f7dc6f}.info{background:#d6eaf8}"
          ".sev{padding:1px 6px;border-radius:3px;font-weight:bold}.finding{border-left:4px solid #ccc;padding-left:1em;margin:1em 0}"
          "code{background:#f4f4f4}</style></head><body>\n<h1>vramtrace analysis</h1>\n", f);
    fprintf(f, "<p>%d trace%s, %d finding%s.</p>\n", r->nTrace, r->nTrace == 1 ? "" : "s", r->nFind,
            r->nFind == 1 ? "" : "s");
    for (int i = 0; i < r->nTrace; i++) {
        const struct vt_trace *t = &r->aTrace[i];
        fputs("<h2>Process ", f);
        vt__put_text(f, t->f.zPid[0] ? t->f.zPid : "?", VT_ESC_HTML);
        if (t->f.zRank[0]) {
            fputs(", rank ", f);
            vt__put_text(f, t->f.zRank, VT_ESC_HTML);
        }
        fputs("</h2>\n<p><code>", f);
        vt__put_text(f, t->f.zPath, VT_ESC_HTML);
        vt__fmt_ns(t->f.t1 - t->f.t0, zA, sizeof zA);
        fprintf(f, "</code>, %s; %lld allocations, %lld live at exit. Phases from %s: "
                   "<span style=\"background:#aec7e8\">training</span> "
                   "<span style=\"background:#ffbb78\">evaluation</span>; dashed red: pinned host memory; dashed pink: managed memory.</p>\n",
                zA, (long long)t->lc.nAlloc, (long long)t->lc.nLiveEnd, t->ph.zSource);
        svg(f, r, i);
        reconcile(f, t);
        for (int k = 0; k < t->f.nNote; k++) {
            fputs("<p><em>note:</em> ", f);
            vt__put_text(f, t->f.azNote[k], VT_ESC_HTML);
            fputs("</p>\n", f);
        }
        if (r->pOpts->bBySite && t->sites.n) {
            fputs("<table><tr><th>site</th><th>allocations</th><th>total</th><th>peak live</th><th>live at exit</th></tr>\n", f);
            for (int k = 0; k < t->sites.n; k++) {
                const struct vt_site *st = &t->sites.a[k];
                char zP[32], zE[32];
                vt__fmt_bytes(st->totalBytes, zB, sizeof zB);
                vt__fmt_bytes(st->peakLiveBytes, zP, sizeof zP);
                vt__fmt_bytes(st->liveBytes, zE, sizeof zE);
                fputs("<tr><td><code>", f);
                vt__put_text(f, st->zSite, VT_ESC_HTML);
                fprintf(f, "</code></td><td>%lld</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", (long long)st->nAlloc, zB,
                        zP, zE);
            }
            fputs("</table>\n", f);
        }
    }
    if (r->nTrace > 1) {
        int64_t sum = 0;
        fputs("<h2>All processes</h2>\n<table><tr><th>pid</th><th>rank</th><th>device peak</th><th>findings</th>"
              "<th>worst</th></tr>\n", f);
        for (int i = 0; i < r->nTrace; i++) {
            const struct vt_trace *t = &r->aTrace[i];
            int worst, n = vt__trace_findings(r, i, &worst);
            sum += vt__main_peak(t);
            vt__fmt_bytes(vt__main_peak(t), zB, sizeof zB);
            fputs("<tr><td>", f);
            vt__put_text(f, t->f.zPid[0] ? t->f.zPid : "?", VT_ESC_HTML);
            fputs("</td><td>", f);
            vt__put_text(f, t->f.zRank[0] ? t->f.zRank : "-", VT_ESC_HTML);
            fprintf(f, "</td><td>%s</td><td>%d</td><td>%s</td></tr>\n", zB, n, worst >= 0 ? vt__sev_name(worst) : "-");
        }
        vt__fmt_bytes(sum, zB, sizeof zB);
        fprintf(f, "</table>\n<p>Sum of per-process device peaks: %s.</p>\n", zB);
    }
    fputs("<h2>Findings (worst first)</h2>\n", f);
    if (!r->nFind) fputs("<p>No problems found.</p>\n", f);
    for (int i = 0; i < r->nFind; i++) {
        const struct vt_finding *x = &r->aFind[i];
        const struct vt_trace *t = &r->aTrace[x->trace];
        vt__fmt_bytes(x->bytes, zB, sizeof zB);
        vt__fmt_at(t, x->firstTs, zA, sizeof zA);
        vt__fmt_at(t, x->lastTs, zZ, sizeof zZ);
        fprintf(f, "<div class=\"finding\" id=\"f%d\"><h3><span class=\"sev %s\">%s</span> %s: ", i + 1,
                vt__sev_name(x->severity), vt__sev_name(x->severity), x->zKind);
        vt__put_text(f, x->zTitle, VT_ESC_HTML);
        fputs("</h3>\n<p>process ", f);
        vt__put_text(f, t->f.zPid[0] ? t->f.zPid : "?", VT_ESC_HTML);
        fprintf(f, "; %s; %lld events; %s .. %s", zB, (long long)x->count, zA, zZ);
        if (x->zPhase[0]) {
            fputs("; phase ", f);
            vt__put_text(f, x->zPhase, VT_ESC_HTML);
        }
        fputs("</p>\n<p><b>where:</b> <code>", f);
        vt__put_text(f, x->zSite, VT_ESC_HTML);
        fputs("</code></p>\n<p><b>evidence:</b> ", f);
        vt__put_text(f, x->zEvidence, VT_ESC_HTML);
        fputs("</p>\n<p><b>fix:</b> ", f);
        vt__put_text(f, x->zFix, VT_ESC_HTML);
        fputs("</p></div>\n", f);
    }
    fputs("</body></html>\n", f);
    return ferror(f) ? -1 : 0;
}
