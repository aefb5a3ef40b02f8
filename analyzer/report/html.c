/* Report: one self-contained HTML file with an SVG memory timeline per process (no scripts, no network). */
#include "report.h"

#include <stdlib.h>
#include <string.h>

#define SVG_W 960
#define SVG_H 290
#define PAD_L 70
#define PAD_R 110  /* the capacity labels */
#define PAD_B 44   /* the finding markers, their labels, the time axis */
#define PAD_T 28   /* the OOM labels */
#define PLOT_W (SVG_W - PAD_L - PAD_R)
#define CHAR_W 7.0 /* a character's width at font-size 10, estimated generously (DejaVu Sans capitals) */
#define LABEL_MAX 512
#define RANKS_FULL 32 /* more ranks than this: one band of all ranks, timelines of the outliers only */
#define RANKS_OUTLIERS 8
#define FINDINGS_FULL 100 /* beyond RANKS_FULL ranks: findings detailed, the rest counted */

/* The text labels of one SVG so far, as boxes: a new label is placed where it overlaps none. */
struct labels {
    int n;
    double a[LABEL_MAX][4]; /* x0, y0, x1, y1 */
};

static double xpos(const struct vt_trace *t, int64_t ts)
{
    double u = (double)(ts - t->f.t0) / (double)(t->f.t1 - t->f.t0 + 1);
    if (u < 0) u = 0;
    if (u > 1) u = 1;
    return PAD_L + u * PLOT_W;
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

/*
 * Place a font-size 10 label z anchored at (x, y) (its baseline; right-aligned when bEnd),
 * or at the first of the other candidate offsets (dx, dy pairs in aAlt, nAlt of them) where
 * its estimated box overlaps no label placed before and stays inside the SVG; writes the
 * <text> (with zAttr, e.g. a fill, and the HTML-escaped text) and returns 1, or 0 when no
 * candidate is free (nothing written: the caller's marker keeps its title).
 */
static int label(FILE *f, struct labels *L, double x, double y, int bEnd, const double *aAlt, int nAlt,
                 const char *zAttr, const char *z)
{
    double w = CHAR_W * (double)strlen(z);
    for (int c = -1; c < nAlt && L->n < LABEL_MAX; c++) {
        double cx = c < 0 ? x : x + aAlt[2 * c], cy = c < 0 ? y : y + aAlt[2 * c + 1];
        double b[4] = {bEnd ? cx - w : cx, cy - 10, bEnd ? cx : cx + w, cy + 3};
        int k;
        if (b[0] < 0 || b[2] > SVG_W || b[1] < 0 || b[3] > SVG_H) continue;
        for (k = 0; k < L->n; k++)
            if (b[0] < L->a[k][2] + 2 && L->a[k][0] < b[2] + 2 && b[1] < L->a[k][3] + 1 && L->a[k][1] < b[3] + 1) break;
        if (k < L->n) continue;
        memcpy(L->a[L->n++], b, sizeof b);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\"%s%s>", cx, cy, bEnd ? " text-anchor=\"end\"" : "",
                zAttr ? zAttr : "");
        vt__put_text(f, z, VT_ESC_HTML);
        fputs("</text>", f);
        return 1;
    }
    return 0;
}

/*
 * Greedy clusters of the sorted positions ax[0..n-1] for labels zLabel(first, count) drawn
 * from the first position on: a position joins the cluster while it lies within the current
 * label's width (plus a gap) of the cluster's first one. aFirst receives each cluster's first
 * index; returns the number of clusters.
 */
static int cluster(const double *ax, int n, void (*zLabel)(void *ctx, int first, int count, char *z, size_t nZ),
                   void *ctx, int *aFirst)
{
    int nC = 0;
    for (int i = 0; i < n;) {
        char z[96];
        int j = i + 1;
        for (;;) {
            zLabel(ctx, i, j - i, z, sizeof z);
            if (j >= n || ax[j] > ax[i] + CHAR_W * (double)strlen(z) + 6) break;
            j++;
        }
        aFirst[nC++] = i;
        i = j;
    }
    return nC;
}

static const char *dev_color(const struct vt_device *dv, int d)
{
    static const char *azColor[] = {"#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#17becf", "#7f7f7f"};
    return dv->id == -1 ? "#d62728" : dv->id == -2 ? "#e377c2" : azColor[d % 6];
}

/* The highest level a device account of trace t is drawn to: its peak, and its capacity when known. */
static int64_t trace_top(const struct vt_trace *t)
{
    int64_t top = 0;
    for (int d = 0; d < t->tl.nDev; d++) {
        const struct vt_device *dv = &t->tl.aDev[d];
        if (dv->peak > top) top = dv->peak;
        if (dv->id >= 0 && dv->totalBytes > top) top = dv->totalBytes;
    }
    return top;
}

/* The plot frame: background, y ticks (shared scale vmax), the time axis of length dur (ns, -1: "100 %"). */
static void svg_frame(FILE *f, struct labels *L, int64_t vmax, int64_t dur, const char *zAria)
{
    char zB[32];
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "role=\"img\" aria-label=\"%s\">\n", SVG_W, SVG_H, SVG_W, SVG_H, zAria);
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fafafa\" stroke=\"#ccc\"/>\n", PAD_L, PAD_T,
            PLOT_W, SVG_H - PAD_T - PAD_B);
    for (int g = 0; g <= 4; g++) {
        int64_t v = vmax * g / 4;
        vt__fmt_bytes(v, zB, sizeof zB);
        label(f, L, PAD_L - 4, ypos(v, vmax) + 3, 1, NULL, 0, NULL, zB);
    }
    if (dur >= 0) vt__fmt_ns(dur, zB, sizeof zB);
    else snprintf(zB, sizeof zB, "100 %% of each run");
    label(f, L, PAD_L, SVG_H - 4, 0, NULL, 0, NULL, "0 s");
    label(f, L, SVG_W - PAD_R, SVG_H - 4, 1, NULL, 0, NULL, zB);
    fputc('\n', f);
}

/* A capacity of `bytes` as a dashed line across the plot (tooltip zTitle), labelled zLabel in the right margin. */
static void capacity_mark(FILE *f, struct labels *L, int64_t bytes, int64_t vmax, const char *zColor, const char *zTitle,
                          const char *zLabel)
{
    static const double aAlt[] = {0, 14, 0, -14, 0, 28};
    double y = ypos(bytes, vmax);
    fprintf(f, "<line class=\"capacity\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1\" "
               "stroke-dasharray=\"6 3\"><title>", PAD_L, SVG_W - PAD_R, y, y, zColor);
    vt__put_text(f, zTitle, VT_ESC_HTML);
    fputs("</title></line>", f);
    label(f, L, SVG_W - PAD_R + 4, y + 4, 0, aAlt, 3, " class=\"capacity-label\"", zLabel);
    fputc('\n', f);
}

/* Each device's capacity (when known) as a dashed line across the plot, labelled in the right margin. */
static void svg_capacity(FILE *f, struct labels *L, const struct vt_trace *t, int64_t vmax)
{
    for (int d = 0; d < t->tl.nDev; d++) {
        const struct vt_device *dv = &t->tl.aDev[d];
        char zB[32], zT[64], zL[48];
        if (dv->id < 0 || dv->totalBytes <= 0) continue;
        vt__fmt_bytes(dv->totalBytes, zB, sizeof zB);
        snprintf(zT, sizeof zT, "device %d capacity: %s", dv->id, zB);
        snprintf(zL, sizeof zL, "cap. %s", zB);
        capacity_mark(f, L, dv->totalBytes, vmax, dev_color(dv, d), zT, zL);
    }
}

/* Label of an OOM cluster: its request when alone, else the count. */
static void oom_label(void *ctx, int first, int count, char *z, size_t nZ)
{
    const struct vt_oom *const *ap = ctx;
    char zB[32];
    if (count == 1) snprintf(z, nZ, "OOM %s", vt__fmt_bytes(ap[first]->requested, zB, sizeof zB));
    else snprintf(z, nZ, "%d OOMs", count);
}

/* Label of a finding cluster: the first finding's number, and how many more. */
static void finding_label(void *ctx, int first, int count, char *z, size_t nZ)
{
    const int *aIdx = ctx;
    if (count == 1) snprintf(z, nZ, "F%d", aIdx[first] + 1);
    else snprintf(z, nZ, "F%d +%d", aIdx[first] + 1, count - 1);
}

static int cmp_double_idx(const void *a, const void *b)
{
    const double *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] < y[1] ? -1 : x[1] > y[1];
}

/*
 * The OOMs of trace i as red lines, and its other findings as markers under the plot, each
 * cluster of nearby ones labelled above (OOMs) or below (F<number>, linked to the finding).
 * Returns 0, or -1 when out of memory.
 */
static int svg_markers(FILE *f, struct labels *L, const struct vt_result *r, int i)
{
    const struct vt_trace *t = &r->aTrace[i];
    int n = t->nOom > r->nFind ? t->nOom : r->nFind, nF = 0, rc = -1;
    double *aXi = malloc(sizeof(double) * 2 * (size_t)(n + 1)), *ax = malloc(sizeof(double) * (size_t)(n + 1));
    int *aFirst = malloc(sizeof(int) * (size_t)(n + 1)), *aIdx = malloc(sizeof(int) * (size_t)(n + 1));
    const struct vt_oom **apO = malloc(sizeof(*apO) * (size_t)(n + 1));
    if (!aXi || !ax || !aFirst || !aIdx || !apO) goto done;
    for (int k = 0; k < t->nOom; k++) {
        aXi[2 * k] = xpos(t, t->aOom[k].ts);
        aXi[2 * k + 1] = k;
    }
    qsort(aXi, (size_t)t->nOom, 2 * sizeof(double), cmp_double_idx);
    for (int k = 0; k < t->nOom; k++) {
        ax[k] = aXi[2 * k];
        apO[k] = &t->aOom[(int)aXi[2 * k + 1]];
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#d62728\" stroke-width=\"2\"/>\n", ax[k],
                ax[k], PAD_T, SVG_H - PAD_B);
    }
    for (int c = 0, nC = cluster(ax, t->nOom, oom_label, apO, aFirst); c < nC; c++) {
        static const double aAlt[] = {0, -14};
        int first = aFirst[c], count = (c + 1 < nC ? aFirst[c + 1] : t->nOom) - first, iFind = -1;
        char z[96], zB[32];
        for (int j = 0; j < r->nFind; j++) { /* the OOM finding it belongs to: its times here (another process's: from its first) */
            const struct vt_finding *x = &r->aFind[j];
            int64_t ts = vt__finding_first_on(x, i);
            if (strcmp(x->zKind, "oom") || ts < 0 || ts > apO[first]->ts) continue;
            if (x->trace != i || apO[first]->ts <= x->lastTs) iFind = j;
        }
        oom_label(apO, first, count, z, sizeof z);
        if (iFind >= 0) fprintf(f, "<a href=\"#f%d\">", iFind + 1);
        fprintf(f, "<g><title>out of memory:");
        for (int k = first; k < first + count; k++)
            fprintf(f, "%s%s requested", k > first ? "," : "", vt__fmt_bytes(apO[k]->requested, zB, sizeof zB));
        fputs("</title>", f);
        label(f, L, ax[first] + 3, PAD_T - 4, 0, aAlt, 1, " fill=\"#d62728\" class=\"oom-label\"", z);
        fputs(iFind >= 0 ? "</g></a>\n" : "</g>\n", f);
    }
    for (int j = 0; j < r->nFind; j++) { /* every other finding of this process: a marker under the plot at its first time here */
        const struct vt_finding *x = &r->aFind[j];
        int64_t ts = vt__finding_first_on(x, i);
        if (ts < 0 || !strcmp(x->zKind, "oom")) continue;
        aXi[2 * nF] = xpos(t, ts);
        aXi[2 * nF++ + 1] = j;
    }
    qsort(aXi, (size_t)nF, 2 * sizeof(double), cmp_double_idx);
    for (int k = 0; k < nF; k++) {
        ax[k] = aXi[2 * k];
        aIdx[k] = (int)aXi[2 * k + 1];
    }
    for (int c = 0, nC = cluster(ax, nF, finding_label, aIdx, aFirst); c < nC; c++) {
        static const double aAlt[] = {0, 14};
        int first = aFirst[c], count = (c + 1 < nC ? aFirst[c + 1] : nF) - first, worst = VT_SEV_INFO;
        double cx = ax[first];
        char z[96];
        for (int k = first; k < first + count; k++)
            if (r->aFind[aIdx[k]].severity > worst) worst = r->aFind[aIdx[k]].severity;
        finding_label(aIdx, first, count, z, sizeof z);
        fprintf(f, "<a href=\"#f%d\"><g class=\"finding-marker\"><title>", aIdx[first] + 1);
        for (int k = first; k < first + count; k++) {
            fprintf(f, "%sF%d: ", k > first ? "\n" : "", aIdx[k] + 1);
            vt__put_text(f, r->aFind[aIdx[k]].zTitle, VT_ESC_HTML);
        }
        fprintf(f, "</title><polygon points=\"%.1f,%d %.1f,%d %.1f,%d\" fill=\"%s\"/>", cx, SVG_H - PAD_B, cx - 5,
                SVG_H - PAD_B + 8, cx + 5, SVG_H - PAD_B + 8,
                worst == VT_SEV_HIGH ? "#c0392b" : worst == VT_SEV_MEDIUM ? "#f39c12" : "#7f8c8d");
        label(f, L, cx - 5, SVG_H - PAD_B + 19, 0, aAlt, 1, NULL, z);
        fputs("</g></a>\n", f);
    }
    rc = 0;
done:
    free(aXi);
    free(ax);
    free(aFirst);
    free(aIdx);
    free(apO);
    return rc;
}

/* The live bytes of device account dv of trace t as a step line (bucket highs, then where each ended). */
static void svg_device(FILE *f, const struct vt_device *dv, const char *zColor, const char *zExtra, int64_t vmax)
{
    int64_t v = 0;
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"%s%s points=\"", zColor,
            dv->id < 0 ? " stroke-dasharray=\"4 2\"" : "", zExtra);
    for (int k = 0; k < VT_TIMELINE_BUCKETS; k++) { /* the bucket's highest level, then where it ended */
        double x = PAD_L + (double)k * PLOT_W / VT_TIMELINE_BUCKETS;
        if (dv->aMax[k] >= 0) {
            fprintf(f, "%.1f,%.1f ", x, ypos(v, vmax));
            fprintf(f, "%.1f,%.1f ", x, ypos(dv->aMax[k], vmax));
            v = dv->aLast[k];
            fprintf(f, "%.1f,%.1f ", x + (double)PLOT_W / VT_TIMELINE_BUCKETS, ypos(v, vmax));
        }
    }
    fprintf(f, "%d,%.1f\">", SVG_W - PAD_R, ypos(v, vmax));
}

/* The SVG timeline of trace i on the shared scale vmax: phases shaded, capacity, live bytes per device, peak, OOMs, findings. */
static int svg(FILE *f, const struct vt_result *r, int i, int64_t vmax)
{
    static const double aPeakAlt[] = {-10, -16, 0, 14, 0, -24, 0, 28, 0, -38};
    const struct vt_trace *t = &r->aTrace[i];
    struct labels *L = calloc(1, sizeof *L);
    char zB[32];
    int rc = -1;
    if (!L) return -1;
    svg_frame(f, L, vmax, t->f.t1 - t->f.t0, "live memory over time");
    for (int k = 0; k < t->ph.n; k++) {
        const struct vt_phase *p = &t->ph.a[k];
        double x0 = xpos(t, p->start), x1 = xpos(t, p->end);
        fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\" opacity=\"0.35\"><title>",
                x0, PAD_T, x1 - x0 > 0.5 ? x1 - x0 : 0.5, SVG_H - PAD_T - PAD_B,
                p->kind == VT_PHASE_EVAL ? "#ffbb78" : p->kind == VT_PHASE_TRAIN ? "#aec7e8" : "#dddddd");
        vt__put_text(f, p->zName, VT_ESC_HTML);
        fprintf(f, " (%s)</title></rect>\n", vt__phase_kind_name(p->kind));
    }
    svg_capacity(f, L, t, vmax);
    for (int d = 0; d < t->tl.nDev; d++) {
        const struct vt_device *dv = &t->tl.aDev[d];
        if (dv->peak <= 0) continue;
        svg_device(f, dv, dev_color(dv, d), "", vmax);
        if (dv->id >= 0) fprintf(f, "<title>device %d live bytes</title></polyline>\n", dv->id);
        else fprintf(f, "<title>%s live bytes</title></polyline>\n", dv->zName);
    }
    for (int d = 0; d < t->tl.nDev; d++) { /* peaks after every line: their labels are placed around them */
        const struct vt_device *dv = &t->tl.aDev[d];
        double px, py, ly;
        char zL[48];
        if (dv->peak <= 0 || dv->peakTs < 0) continue;
        px = xpos(t, dv->peakTs);
        py = ypos(dv->peak, vmax);
        vt__fmt_bytes(dv->peak, zB, sizeof zB);
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"><title>peak %s", px, py, dev_color(dv, d), zB);
        for (int k = 0; k < vt__report_groups(r, dv); k++) { /* what was live, by site */
            char zG[600];
            vt__fmt_group(t, &dv->aGroup[k], zG, sizeof zG);
            fputs(k ? "; " : "; live: ", f);
            vt__put_text(f, zG, VT_ESC_HTML);
        }
        fputs("</title></circle>", f);
        snprintf(zL, sizeof zL, "peak %s", zB); /* right of the point, else left of it, else above or below */
        /* under the point while that stays in the plot, else over it: a low peak's label must not
         * take the row under the plot, where the finding markers' labels go */
        ly = py + 14 + 3 <= SVG_H - PAD_B ? py + 14 : py - 8;
        if (!label(f, L, px + 6, ly, 0, NULL, 0, " class=\"peak-label\"", zL))
            label(f, L, px - 6, ly, 1, aPeakAlt, 5, " class=\"peak-label\"", zL);
        fputc('\n', f);
    }
    if (svg_markers(f, L, r, i)) goto done;
    fputs("</svg>\n", f);
    rc = 0;
done:
    free(L);
    return rc;
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
    fprintf(f, "</td><td>%s</td><td>%s</td><td>%d</td><td>%s</td></tr>\n", zB, zD, n,
            worst >= 0 ? vt__sev_name(worst) : "-");
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Index of the device account with the largest device (not host) peak of t, or -1. */
static int main_dev(const struct vt_trace *t)
{
    int best = -1;
    for (int d = 0; d < t->tl.nDev; d++)
        if (t->tl.aDev[d].id >= 0 && (best < 0 || t->tl.aDev[d].peak > t->tl.aDev[best].peak)) best = d;
    return best;
}

/*
 * The imbalance between the ranks: lowest, median and highest device peak, the spread, and
 * the table of processes (aPeak: each trace's device peak, sorted copy in aSorted).
 */
static void ranks_table(FILE *f, const struct vt_result *r, const int64_t *aPeak, const int64_t *aSorted)
{
    int64_t median = aSorted[r->nTrace / 2], sum = 0;
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
    fputs("<h2>All processes</h2>\n<p class=\"imbalance\">Imbalance of the device peaks: lowest ", f);
    fprintf(f, "%s (", zMin);
    vt__put_text(f, vt__fmt_process(&r->aTrace[iMin], zP, sizeof zP), VT_ESC_HTML);
    fprintf(f, "), median %s, highest %s (", zMed, zMax);
    vt__put_text(f, vt__fmt_process(&r->aTrace[iMax], zP, sizeof zP), VT_ESC_HTML);
    fprintf(f, "); spread %s", zS);
    if (median > 0) fprintf(f, " (%.1f %% of the median)", 100.0 * (double)(aPeak[iMax] - aPeak[iMin]) / (double)median);
    vt__fmt_bytes(sum, zS, sizeof zS);
    fprintf(f, ". Sum of per-process device peaks: %s.</p>\n", zS);
    fputs("<table><tr><th>process</th><th>device peak</th><th>vs median</th><th>findings</th>"
          "<th>worst</th></tr>\n", f);
    for (int i = 0; i < r->nTrace; i++) rank_row(f, r, i, median);
    fputs("</table>\n", f);
}

/*
 * The band's capacity line: the smallest capacity of the ranks' drawn devices (the first to run out),
 * labelled with the range when the ranks' devices differ; nothing when no capacity is known.
 */
static void svg_band_capacity(FILE *f, struct labels *L, const struct vt_result *r, int64_t vmax)
{
    int64_t lo = 0, hi = 0;
    char zLo[32], zHi[32], zT[128], zL[48];
    for (int i = 0; i < r->nTrace; i++) { /* the device each rank's level is drawn for */
        int d = main_dev(&r->aTrace[i]);
        const struct vt_device *dv = d >= 0 ? &r->aTrace[i].tl.aDev[d] : NULL;
        if (!dv || dv->id < 0 || dv->totalBytes <= 0) continue;
        if (!lo || dv->totalBytes < lo) lo = dv->totalBytes;
        if (dv->totalBytes > hi) hi = dv->totalBytes;
    }
    if (!lo) return;
    vt__fmt_bytes(lo, zLo, sizeof zLo);
    vt__fmt_bytes(hi, zHi, sizeof zHi);
    snprintf(zT, sizeof zT, "smallest device capacity of the %d ranks: %s%s%s", r->nTrace, zLo,
             hi > lo ? "; largest " : "", hi > lo ? zHi : "");
    if (hi > lo) snprintf(zL, sizeof zL, "min %s", zLo); /* the margin holds 15 characters */
    else snprintf(zL, sizeof zL, "cap. %s", zLo);
    capacity_mark(f, L, lo, vmax, "#d62728", zT, zL);
}

/*
 * Beyond RANKS_FULL ranks: the lowest, median and highest live bytes of every rank's main
 * device in each timeline bucket (time as a fraction of each run) as a band, the outlier
 * ranks (aOut[0..nOut-1]) drawn over it. Returns 0, or -1 when out of memory.
 */
static int svg_band(FILE *f, const struct vt_result *r, int64_t vmax, const int *aOut, int nOut)
{
    static const char *azColor[] = {"#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#2ca02c", "#7f7f7f", "#bcbd22"};
    int64_t *aV = malloc(sizeof(int64_t) * (size_t)r->nTrace * VT_TIMELINE_BUCKETS), *aCol = malloc(sizeof(int64_t) * (size_t)r->nTrace);
    int64_t aLo[VT_TIMELINE_BUCKETS], aMed[VT_TIMELINE_BUCKETS], aHi[VT_TIMELINE_BUCKETS];
    struct labels *L = calloc(1, sizeof *L);
    int rc = -1;
    if (!aV || !aCol || !L) goto done;
    for (int i = 0; i < r->nTrace; i++) { /* each rank's level per bucket, carried through empty buckets */
        const struct vt_trace *t = &r->aTrace[i];
        int d = main_dev(t);
        int64_t v = 0;
        for (int k = 0; k < VT_TIMELINE_BUCKETS; k++) {
            if (d >= 0 && t->tl.aDev[d].aMax[k] >= 0) {
                aV[(size_t)i * VT_TIMELINE_BUCKETS + k] = t->tl.aDev[d].aMax[k];
                v = t->tl.aDev[d].aLast[k];
            } else aV[(size_t)i * VT_TIMELINE_BUCKETS + k] = v;
        }
    }
    for (int k = 0; k < VT_TIMELINE_BUCKETS; k++) {
        for (int i = 0; i < r->nTrace; i++) aCol[i] = aV[(size_t)i * VT_TIMELINE_BUCKETS + k];
        qsort(aCol, (size_t)r->nTrace, sizeof(int64_t), cmp_i64);
        aLo[k] = aCol[0];
        aMed[k] = aCol[r->nTrace / 2];
        aHi[k] = aCol[r->nTrace - 1];
    }
    svg_frame(f, L, vmax, -1, "live memory of all ranks over time");
    svg_band_capacity(f, L, r, vmax);
    fputs("<polygon class=\"band\" fill=\"#1f77b4\" opacity=\"0.25\" points=\"", f);
    for (int k = 0; k < VT_TIMELINE_BUCKETS; k++)
        fprintf(f, "%.1f,%.1f ", PAD_L + (k + 0.5) * PLOT_W / VT_TIMELINE_BUCKETS, ypos(aHi[k], vmax));
    for (int k = VT_TIMELINE_BUCKETS - 1; k >= 0; k--)
        fprintf(f, "%.1f,%.1f ", PAD_L + (k + 0.5) * PLOT_W / VT_TIMELINE_BUCKETS, ypos(aLo[k], vmax));
    fprintf(f, "\"><title>lowest to highest of %d ranks</title></polygon>\n", r->nTrace);
    fputs("<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\" points=\"", f);
    for (int k = 0; k < VT_TIMELINE_BUCKETS; k++)
        fprintf(f, "%.1f,%.1f ", PAD_L + (k + 0.5) * PLOT_W / VT_TIMELINE_BUCKETS, ypos(aMed[k], vmax));
    fputs("\"><title>median rank</title></polyline>\n", f);
    label(f, L, PAD_L + 4, PAD_T + 12, 0, NULL, 0, " fill=\"#1f77b4\"", "median, band: lowest to highest rank");
    for (int o = 0; o < nOut; o++) {
        const struct vt_trace *t = &r->aTrace[aOut[o]];
        int d = main_dev(t);
        char zL[80], zAttr[40], zP[300];
        static const double aAlt[] = {0, 14, 0, 28, 0, 42, 0, 56, 0, 70, 0, 84, 0, 98};
        if (d < 0) continue;
        svg_device(f, &t->tl.aDev[d], azColor[o % 8], " class=\"outlier\"", vmax);
        fputs("<title>", f);
        vt__put_text(f, vt__fmt_process(t, zP, sizeof zP), VT_ESC_HTML);
        fputs("</title></polyline>\n", f);
        if (t->f.zRank[0]) snprintf(zL, sizeof zL, "rank %.40s", t->f.zRank);
        else snprintf(zL, sizeof zL, "%.45s", zP);
        snprintf(zAttr, sizeof zAttr, " fill=\"%s\"", azColor[o % 8]);
        label(f, L, SVG_W - PAD_R - 4, PAD_T + 12, 1, aAlt, 7, zAttr, zL);
    }
    fputs("</svg>\n", f);
    rc = 0;
done:
    free(aV);
    free(aCol);
    free(L);
    return rc;
}

/* Under trace t's timeline: each account's peaks (the figure source's), and what was live at them by site and kind. */
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
            vt__fmt_group(t, &dv->aGroup[k], zG, sizeof zG);
            fputs(k ? "<br>" : "", f);
            vt__put_text(f, zG, VT_ESC_HTML);
        }
        fputs("</td></tr>\n", f);
    }
    if (bHead) fputs("</table>\n", f);
}

/* Under trace t's timeline: its phases with their peaks and the largest group live at each, or why there are none. */
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
    fprintf(f, "<table class=\"phases\"><tr><th>phase</th><th>kind</th><th>start</th><th>end</th><th>peak</th>"
               "<th>iterations</th><th>largest at its peak</th></tr>\n");
    for (int k = 0; k < t->ph.n; k++) {
        const struct vt_phase *p = &t->ph.a[k];
        vt__fig_fmt_bound(&t->f, p->start, -1, zA, sizeof zA); /* widened: a window to paste */
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

/* The section of trace i: heading, facts, timeline on the shared scale vmax, peaks, phases, notes, sites. 0, or -1 when out of memory. */
static int trace_section(FILE *f, const struct vt_result *r, int i, int64_t vmax)
{
    const struct vt_trace *t = &r->aTrace[i];
    char zB[32], zA[32], zP[300];
    int bCap = 0;
    for (int d = 0; d < t->tl.nDev; d++)
        if (t->tl.aDev[d].id >= 0 && t->tl.aDev[d].totalBytes > 0) bCap = 1;
    fputs("<h2>Process ", f);
    vt__put_text(f, vt__fmt_process(t, zP, sizeof zP), VT_ESC_HTML);
    fputs("</h2>\n<p><code>", f);
    vt__put_text(f, t->f.zPath, VT_ESC_HTML);
    if (t->f.fig.duration >= 0) vt__fmt_ns(t->f.fig.duration, zA, sizeof zA);
    else snprintf(zA, sizeof zA, "duration unknown");
    fprintf(f, "</code>, %s; %lld allocations, %lld live at exit; level: %s. Phases from %s: "
               "<span style=\"background:#aec7e8\">training</span> "
               "<span style=\"background:#ffbb78\">evaluation</span>; dashed red: pinned host memory; dashed pink: managed memory; "
               "%s; F<i>n</i>: finding <i>n</i> below.</p>\n",
            zA, (long long)t->lc.nAlloc, (long long)t->lc.nLiveEnd, vt__level_name(t->f.fig.level), t->ph.zSource,
            bCap ? "long dashes: the device's capacity" : "the device's capacity is not known");
    if (svg(f, r, i, vmax)) return -1;
    reconcile(f, t);
    peaks(f, r, t);
    phases(f, t);
    for (int k = 0; k < t->f.nNote; k++) {
        fputs("<p><em>note:</em> ", f);
        vt__put_text(f, t->f.azNote[k], VT_ESC_HTML);
        fputs("</p>\n", f);
    }
    if (r->pOpts->bBySite && t->sites.n) {
        int *aIdx, nShown = vt__report_sites(r, t, &aIdx);
        if (nShown < 0) return -1;
        fputs("<table class=\"sites\"><tr><th>site</th><th>allocations</th><th>total</th><th>peak live</th><th>live at exit</th></tr>\n", f);
        for (int k = 0; k < nShown; k++) {
            const struct vt_site *st = &t->sites.a[aIdx[k]];
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
        free(aIdx);
    }
    return 0;
}

/* Finding i in full, anchored as f<i+1>. */
static void finding_div(FILE *f, const struct vt_result *r, int i)
{
    const struct vt_finding *x = &r->aFind[i];
    const struct vt_trace *t = &r->aTrace[x->trace];
    char zB[32], zA[32], zZ[32], zW[256];
    vt__fmt_bytes(x->bytes, zB, sizeof zB);
    vt__fig_fmt_bound(&t->f, x->firstTs, -1, zA, sizeof zA); /* the window to paste into export --from/--to */
    vt__fig_fmt_bound(&t->f, x->lastTs, +1, zZ, sizeof zZ);
    fprintf(f, "<div class=\"finding\" id=\"f%d\"><h3><span class=\"sev %s\">%s</span> F%d %s: ", i + 1,
            vt__sev_name(x->severity), vt__sev_name(x->severity), i + 1, x->zKind);
    vt__put_text(f, x->zTitle, VT_ESC_HTML);
    vt__fmt_ranks(r, x, zW, sizeof zW);
    if (zW[0]) {
        fputs("</h3>\n<p>", f);
        vt__put_text(f, zW, VT_ESC_HTML);
    } else {
        fputs("</h3>\n<p>", f);
        vt__put_text(f, vt__fmt_process(t, zW, sizeof zW), VT_ESC_HTML);
    }
    fprintf(f, "; %s; %lld events; %s .. %s", zB, (long long)x->count, zA, zZ);
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

/*
 * The findings, worst first: all in full, or beyond RANKS_FULL ranks those of the ranks
 * drawn (abShown) and the FINDINGS_FULL worst in full and the others counted by kind and severity.
 */
/* Whether finding x occurred on a process whose timeline is drawn (abShown NULL: all are). */
static int shown(const struct vt_finding *x, const char *abShown)
{
    if (!abShown) return 1;
    if (!x->aTraces) return abShown[x->trace];
    for (int k = 0; k < x->nTraces; k++)
        if (abShown[x->aTraces[k]]) return 1;
    return 0;
}

static void findings(FILE *f, const struct vt_result *r, const char *abShown)
{
    int nLeft = 0;
    fputs("<h2>Findings (worst first)</h2>\n", f);
    if (!r->nFind) {
        char zNone[200];
        fputs("<p>", f);
        vt__put_text(f, vt__fmt_no_findings(r, zNone, sizeof zNone), VT_ESC_HTML);
        fputs("</p>\n", f);
    }
    for (int i = 0; i < r->nFind; i++) {
        if (i < FINDINGS_FULL || shown(&r->aFind[i], abShown)) finding_div(f, r, i);
        else nLeft++;
    }
    if (!nLeft) return;
    fprintf(f, "<p>%d more finding%s (all in <code>--format json</code>):</p>\n<table><tr><th>kind</th><th>severity</th>"
               "<th>findings</th><th>processes</th></tr>\n", nLeft, nLeft == 1 ? "" : "s");
    for (int i = 0; i < r->nFind; i++) { /* one row per (kind, severity), at its first occurrence */
        const struct vt_finding *x = &r->aFind[i];
        int n = 0, nProc = 0, bSeen = 0, iLast = -1;
        if (i < FINDINGS_FULL || shown(x, abShown)) continue;
        for (int j = FINDINGS_FULL; j < i && !bSeen; j++)
            bSeen = !shown(&r->aFind[j], abShown) && r->aFind[j].severity == x->severity && !strcmp(r->aFind[j].zKind, x->zKind);
        if (bSeen) continue;
        for (int j = i; j < r->nFind; j++)
            if (!shown(&r->aFind[j], abShown) && r->aFind[j].severity == x->severity && !strcmp(r->aFind[j].zKind, x->zKind)) {
                n++;
                if (r->aFind[j].aTraces) nProc += r->aFind[j].nTraces; /* grouped across processes */
                else if (r->aFind[j].trace != iLast) nProc++;
                iLast = r->aFind[j].trace;
            }
        fprintf(f, "<tr><td>%s</td><td>%s</td><td>%d</td><td>%d</td></tr>\n", x->zKind, vt__sev_name(x->severity), n, nProc);
    }
    fputs("</table>\n", f);
}

/* The whole HTML report (inline CSS, SVG, no script); 0, or -1 on a write error or when out of memory. */
int vt__report_html(FILE *f, const struct vt_result *r)
{
    int64_t *aPeak = malloc(sizeof(int64_t) * (size_t)(r->nTrace + 1)), *aSorted = malloc(sizeof(int64_t) * (size_t)(r->nTrace + 1));
    int *aOut = malloc(sizeof(int) * (size_t)(r->nTrace + 1)), nOut = 0, rc = -1;
    char *abShown = NULL;
    int64_t vmax = 1;
    if (!aPeak || !aSorted || !aOut) goto done;
    for (int i = 0; i < r->nTrace; i++) { /* one scale for every rank: the highest peak or capacity of any */
        aSorted[i] = aPeak[i] = vt__fig_trace_peak(&r->aTrace[i].f) > 0 ? vt__fig_trace_peak(&r->aTrace[i].f) : 0;
        if (trace_top(&r->aTrace[i]) > vmax) vmax = trace_top(&r->aTrace[i]);
    }
    qsort(aSorted, (size_t)r->nTrace, sizeof(int64_t), cmp_i64);
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>vramtrace analysis</title>\n"
          "<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:1000px;color:#222}"
          "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 6px;text-align:left;font-size:90%}"
          ".high{color:#fff;background:#c0392b}.medium{background:#f39c12}.low{background:#f7dc6f}.info{background:#d6eaf8}"
          ".sev{padding:1px 6px;border-radius:3px;font-weight:bold}.finding{border-left:4px solid #ccc;padding-left:1em;margin:1em 0}"
          "code{background:#f4f4f4}svg text{font-family:sans-serif}</style></head><body>\n<h1>vramtrace analysis</h1>\n", f);
    fprintf(f, "<p>%d trace%s, %d finding%s.%s</p>\n", r->nTrace, r->nTrace == 1 ? "" : "s", r->nFind,
            r->nFind == 1 ? "" : "s", r->nTrace > 1 ? " Every timeline has the same scale." : "");
    if (r->nTrace > RANKS_FULL) { /* the ranks farthest from the median peak are drawn; the others are in the band */
        int64_t median = aSorted[r->nTrace / 2];
        if (!(abShown = calloc((size_t)r->nTrace, 1))) goto done;
        while (nOut < RANKS_OUTLIERS) {
            int best = -1;
            int64_t bestDev = 0;
            for (int i = 0; i < r->nTrace; i++) {
                int64_t dev = aPeak[i] > median ? aPeak[i] - median : median - aPeak[i];
                if (!abShown[i] && dev > bestDev) best = i, bestDev = dev;
            }
            if (best < 0) break;
            abShown[best] = 1;
            aOut[nOut++] = best;
        }
        fprintf(f, "<h2>All %d processes</h2>\n<p>Live bytes of each process's largest device over its run: the median "
                   "process, the band from the lowest to the highest", r->nTrace);
        if (nOut)
            fprintf(f, ", and the %d process%s whose peak is farthest from the median, whose timelines follow.</p>\n", nOut,
                    nOut == 1 ? "" : "es");
        else fputs("; every peak is the same: the first process's timeline follows.</p>\n", f);
        if (!nOut) abShown[0] = 1;
        if (svg_band(f, r, vmax, aOut, nOut)) goto done;
    }
    for (int i = 0; i < r->nTrace; i++)
        if (!abShown || abShown[i])
            if (trace_section(f, r, i, vmax)) goto done;
    if (r->nTrace > 1) ranks_table(f, r, aPeak, aSorted);
    findings(f, r, abShown);
    fputs("</body></html>\n", f);
    rc = ferror(f) ? -1 : 0;
done:
    free(aPeak);
    free(aSorted);
    free(aOut);
    free(abShown);
    return rc;
}
