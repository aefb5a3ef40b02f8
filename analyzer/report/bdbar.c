/* Report: a breakdown as an SVG stacked bar with its legend, for the HTML reports (analyze, diff). */
#include "report.h"

#include <string.h>

#define BAR_W 720
#define BAR_H 22

/* One color per category (enum vt_cat), stable between reports so that two bars compare at a glance. */
static const char *const azColor[VT_CAT_N] = {
    [VT_CAT_PARAM] = "#4e79a7",  [VT_CAT_GRAD] = "#59a14f",   [VT_CAT_OPT] = "#9c755f",   [VT_CAT_ACT] = "#f28e2b",
    [VT_CAT_TRANSIENT] = "#ffbe7d", [VT_CAT_TEMP] = "#edc948", [VT_CAT_STATE] = "#76b7b2", [VT_CAT_CACHE] = "#bab0ac",
    [VT_CAT_NCCL] = "#b07aa1",   [VT_CAT_CUBLAS] = "#ff9da7", [VT_CAT_CUDNN] = "#d37295", [VT_CAT_GRAPH] = "#a0cbe8",
    [VT_CAT_LIB] = "#8cd17d",    [VT_CAT_CONTEXT] = "#79706e", [VT_CAT_OTHERS] = "#e15759", [VT_CAT_CTXOTHERS] = "#9d7660",
    [VT_CAT_BEFORE] = "#499894",
    [VT_CAT_UNKNOWN] = "#d4d4d4",
};

const char *vt__cat_color(int cat)
{
    return cat >= 0 && cat < VT_CAT_N && azColor[cat] ? azColor[cat] : "#d4d4d4";
}

void vt__html_bdbar(FILE *f, const struct vt_bdpart *a, int n, int64_t scale, const char *zLabel)
{
    double x = 0;
    char zB[32], zN[128];
    fprintf(f, "<svg class=\"bdbar\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"", BAR_W + 120,
            BAR_H, BAR_W + 120, BAR_H);
    vt__put_text(f, zLabel ? zLabel : "breakdown", VT_ESC_HTML);
    fputs("\">", f);
    for (int k = 0; k < n; k++) {
        double w = scale > 0 ? (double)BAR_W * (double)a[k].bytes / (double)scale : 0;
        if (a[k].bytes <= 0) continue;
        fprintf(f, "<rect x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>", x, w, BAR_H,
                vt__cat_color(a[k].cat));
        vt__put_text(f, vt__fmt_bdname(&a[k], zN, sizeof zN), VT_ESC_HTML);
        fprintf(f, ": %s</title></rect>", vt__fmt_bytes(a[k].bytes, zB, sizeof zB));
        x += w;
    }
    if (zLabel) {
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\">", x + 6, BAR_H - 7);
        vt__put_text(f, zLabel, VT_ESC_HTML);
        fputs("</text>", f);
    }
    fputs("</svg>\n", f);
}

void vt__html_bdlegend(FILE *f, const struct vt_breakdown *b)
{
    char zB[32], zP[16], zN[128];
    fputs("<table class=\"breakdown\"><tr><th></th><th>category</th><th>bytes</th><th>share</th><th>evidence</th></tr>\n", f);
    for (int k = 0; k < b->n; k++) {
        const struct vt_bdpart *p = &b->a[k];
        fprintf(f, "<tr><td><span style=\"display:inline-block;width:12px;height:12px;background:%s\"></span></td><td>",
                vt__cat_color(p->cat));
        vt__put_text(f, vt__fmt_bdname(p, zN, sizeof zN), VT_ESC_HTML);
        fprintf(f, "</td><td>%s</td><td>%s</td><td>", vt__fmt_bytes(p->bytes, zB, sizeof zB),
                vt__fmt_bdshare(b, p, zP, sizeof zP));
        vt__put_text(f, p->zEvidence ? p->zEvidence : "", VT_ESC_HTML);
        fputs("</td></tr>\n", f);
    }
    if (b->zOthers) { /* not a part: its bytes are not known */
        fprintf(f, "<tr><td></td><td>%s</td><td>unknown</td><td></td><td>", vt__cat_name(VT_CAT_OTHERS));
        vt__put_text(f, b->zOthers, VT_ESC_HTML);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

void vt__html_breakdown(FILE *f, const struct vt_trace *t, const char *zWhat, const struct vt_breakdown *b)
{
    char zH[300];
    fputs("<p><em>", f);
    vt__put_text(f, zWhat, VT_ESC_HTML);
    fputs(", ", f);
    vt__put_text(f, vt__fmt_bdhead(t, b, zH, sizeof zH), VT_ESC_HTML);
    fputs(":</em></p>\n", f);
    vt__html_bdbar(f, b->a, b->n, b->total, NULL);
    vt__html_bdlegend(f, b);
}

void vt__html_trace_breakdowns(FILE *f, const struct vt_trace *t)
{
    char zW[200], zL[700], zS[700];
    for (int d = 0; d < t->tl.nDev; d++) {
        const struct vt_device *dv = &t->tl.aDev[d];
        if (!dv->bd.n) continue;
        vt__html_breakdown(f, t, vt__fmt_device(dv, zW, sizeof zW), &dv->bd);
        if (!vt__fmt_fit(dv, zL, sizeof zL)) continue;
        fputs("<p><em>what would fit:</em> ", f);
        vt__put_text(f, zL, VT_ESC_HTML);
        fputs("</p>\n<ul>", f);
        for (int k = 0; k < dv->fit.nAssume; k++) {
            fputs("<li>assuming ", f);
            vt__put_text(f, dv->fit.azAssume[k], VT_ESC_HTML);
            fputs("</li>", f);
        }
        for (int k = 0; k < dv->fit.nSave; k++) {
            fputs("<li>saves: ", f);
            vt__put_text(f, vt__fmt_saving(&dv->fit.aSave[k], zS, sizeof zS), VT_ESC_HTML);
            fputs("</li>", f);
        }
        fputs("</ul>\n", f);
    }
    for (int k = 0, nShown = 0; k < t->nOom && nShown < 3; k++) {
        char zAt[32];
        if (!vt__report_oom_shown(t, k)) continue;
        nShown++;
        vt__fmt_at(t, t->aOom[k].ts, zAt, sizeof zAt);
        snprintf(zW, sizeof zW, "at the OOM at %s (device %d)", zAt, t->aOom[k].device);
        vt__html_breakdown(f, NULL, zW, &t->aOom[k].bd);
    }
}
