/* Report: two runs compared (vramtrace diff) as text, JSON, Markdown or HTML. */
#include "report.h"

#include <stdlib.h>
#include <string.h>

#define VT_DIFF_VERSION 1

static const char *const azChange[] = {"", "new", "gone", "grew", "shrank"};

/* One side's figure for people: its bytes, "unknown" (-1), or "none" (VT_DIFF_NONE: not in that run). */
static const char *fmt_side(int64_t v, char *z, size_t n)
{
    if (v >= 0) return vt__fmt_bytes(v, z, n);
    snprintf(z, n, "%s", v == -1 ? "unknown" : "none");
    return z;
}

/* "54.3 GiB -> 60.1 GiB (+5.8 GiB, +10.7%)"; a side unknown or absent said so (fmt_side), with no change. */
static const char *fmt_change(int64_t base, int64_t cur, char *z, size_t n)
{
    char zA[32], zB[32], zD[32];
    if (base < 0 || cur < 0) {
        snprintf(z, n, "%s -> %s", fmt_side(base, zA, sizeof zA), fmt_side(cur, zB, sizeof zB));
        return z;
    }
    vt__fmt_bytes(cur >= base ? cur - base : base - cur, zD, sizeof zD);
    if (base > 0)
        snprintf(z, n, "%s -> %s (%s%s, %+.1f%%)", vt__fmt_bytes(base, zA, sizeof zA), vt__fmt_bytes(cur, zB, sizeof zB),
                 cur >= base ? "+" : "-", zD, 100.0 * (double)(cur - base) / (double)base);
    else
        snprintf(z, n, "%s -> %s (%s%s)", vt__fmt_bytes(base, zA, sizeof zA), vt__fmt_bytes(cur, zB, sizeof zB),
                 cur >= base ? "+" : "-", zD);
    return z;
}

/* A device entry's name for people: "pid 12, rank 0, device 0 (NVIDIA H100)". */
static const char *fmt_dev(const struct vt_diffdev *e, char *z, size_t n)
{
    snprintf(z, n, "%s, device %d%s%s%s", e->zProc, e->id, e->zName[0] ? " (" : "", e->zName, e->zName[0] ? ")" : "");
    return z;
}

/* Two sides' names of one thing (a peak's figure, a breakdown's basis): "reserved" when alike or only one side has
 * it, else "base: reserved, new: allocated". Into z (size n); returns z. */
static const char *fmt_sides(const char *zBase, const char *zNew, char *z, size_t n)
{
    if (!zBase || !zNew || !strcmp(zBase, zNew)) snprintf(z, n, "%s", zBase ? zBase : zNew ? zNew : "unknown");
    else snprintf(z, n, "base: %s, new: %s", zBase, zNew);
    return z;
}

/* Which figure entry e's peaks are, for people (bKey 0) or programs: vt__fig_headline_name of each side. */
static const char *fmt_peak_of(const struct vt_diffdev *e, int bKey, char *z, size_t n)
{
    return fmt_sides(e->base >= 0 ? vt__fig_headline_name(e->aOf[0], bKey) : NULL,
                     e->cur >= 0 ? vt__fig_headline_name(e->aOf[1], bKey) : NULL, z, n);
}

/* Whether entry e's peak on side bNew is a reserved one (the allocated peak is said beside it). */
static int reserved_peak(const struct vt_diffdev *e, int bNew)
{
    int k = e->aOf[bNew];
    return (bNew ? e->cur : e->base) >= 0 && (k == VT_HEAD_RESERVED || k == VT_HEAD_PROC_RESERVED);
}

/* Entry e's peak as text says it: "11.9 GiB -> 11.9 GiB (+0 B, +0.0%) reserved; allocated 6.17 GiB -> 6.17 GiB
 * (+0 B, +0.0%)" (the allocated peak beside a reserved one where known). Into z (size n); returns z. */
static const char *fmt_peak(const struct vt_diffdev *e, char *z, size_t n)
{
    char zC[200], zO[200], zA[200];
    fmt_peak_of(e, 0, zO, sizeof zO);
    zA[0] = 0;
    if (reserved_peak(e, 0) || reserved_peak(e, 1)) /* beside a reserved peak, the allocated one (or unknown) */
        snprintf(zA, sizeof zA, "; allocated %s", fmt_change(e->baseAlloc, e->curAlloc, zC, sizeof zC));
    snprintf(z, n, "%s%s%s%s", fmt_change(e->base, e->cur, zC, sizeof zC), e->base >= 0 || e->cur >= 0 ? " " : "",
             e->base >= 0 || e->cur >= 0 ? zO : "", zA);
    return z;
}

/* "what it was (reserved)": what entry e's breakdowns sum to, named by their bases. Into z; returns z. */
static const char *fmt_basis(const struct vt_diffdev *e, char *z, size_t n)
{
    char zS[200];
    snprintf(z, n, "what it was (%s)", fmt_sides(e->azBasis[0], e->azBasis[1], zS, sizeof zS));
    return z;
}

/* A category's name, with its library. */
static const char *fmt_cat(const struct vt_diffcat *c, char *z, size_t n)
{
    struct vt_bdpart p;
    memset(&p, 0, sizeof p);
    p.cat = c->cat;
    snprintf(p.zOwner, sizeof p.zOwner, "%s", c->zOwner);
    return vt__fmt_bdname(&p, z, n);
}

/* "max growth of a device peak: +10.7% (pid 12, device 0)" into z; empty when no peak was compared. */
static void fmt_max(const struct vt_diff *d, char *z, size_t n)
{
    char zD[400];
    z[0] = 0;
    if (d->iMaxGrowth < 0) return;
    snprintf(z, n, "largest change of a device peak: %+.1f%% (%s)", d->maxGrowthPct,
             fmt_dev(&d->aDev[d->iMaxGrowth], zD, sizeof zD));
}

/* Groups of changed findings, in the order they are listed, with their labels (text, JSON). */
enum { FIND_APPEARED, FIND_VANISHED, FIND_CHANGED, FIND_GROUPS };
static const char *const azFindLabel[FIND_GROUPS] = {"appeared", "vanished", "changed"};
static const char *const azFindJson[FIND_GROUPS] = {"appeared", "vanished", "severity_changed"};

/* Which group (FIND_*) changed finding x is listed in. */
static int find_group(const struct vt_difffind *x)
{
    return x->pBaseF ? FIND_CHANGED : x->bNew ? FIND_APPEARED : FIND_VANISHED;
}

/* The finding's one-line description: "[high] leak: TITLE (where)", "[medium -> info] ..." for a severity that changed
 * (NEW's title). */
static void fmt_find(const struct vt_diff *d, const struct vt_difffind *x, char *z, size_t n)
{
    const struct vt_result *r = x->bNew ? d->pNew : d->pBase;
    char zW[256], zS[40];
    vt__fmt_ranks(r, x->f, zW, sizeof zW);
    if (!zW[0]) vt__fmt_process(&r->aTrace[x->f->trace], zW, sizeof zW);
    if (x->pBaseF)
        snprintf(zS, sizeof zS, "%s -> %s", vt__sev_name(x->pBaseF->severity), vt__sev_name(x->f->severity));
    else
        snprintf(zS, sizeof zS, "%s", vt__sev_name(x->f->severity));
    snprintf(z, n, "[%s] %s: %s (%s)", zS, x->f->zKind, x->f->zTitle ? x->f->zTitle : "", zW);
}

/* The runs' paths, comma-separated, into z. */
static void fmt_paths(const struct vt_result *r, char *z, size_t n)
{
    size_t k = 0;
    z[0] = 0;
    for (int i = 0; i < r->nTrace && k + 1 < n; i++) {
        int m = snprintf(z + k, n - k, "%s%s", i ? ", " : "", r->aTrace[i].f.zPath);
        if (m < 0) break;
        k += (size_t)m;
    }
}

int vt__diff_text(FILE *f, const struct vt_diff *d, int nTop)
{
    char zL[1400], zC[200], zN[400], zB[600], zNew[600];
    int nShown = 0;
    fmt_paths(d->pBase, zB, sizeof zB);
    fmt_paths(d->pNew, zNew, sizeof zNew);
    fputs("vramtrace diff: ", f);
    vt__put_text(f, zB, VT_ESC_LINE);
    fputs(" -> ", f);
    vt__put_text(f, zNew, VT_ESC_LINE);
    fputc('\n', f);
    if (d->zWarn) {
        fputs("warning: ", f);
        vt__put_text(f, d->zWarn, VT_ESC_LINE);
        fputc('\n', f);
    }
    fputs("\n== Device peaks and what they were ==\n", f);
    for (int i = 0; i < d->nDev; i++) {
        const struct vt_diffdev *e = &d->aDev[i];
        fputs("  ", f);
        vt__put_text(f, fmt_dev(e, zN, sizeof zN), VT_ESC_LINE);
        fprintf(f, ": %s\n", fmt_peak(e, zL, sizeof zL));
        if (e->nCat) { /* what the parts below sum to */
            fmt_basis(e, zN, sizeof zN);
            int nPad = 42 - (int)vt__utf8_chars(zN, strlen(zN));
            fprintf(f, "    %s%*s %s\n", zN, nPad > 1 ? nPad : 1, "", fmt_change(e->baseSum, e->curSum, zC, sizeof zC));
        }
        for (int k = 0; k < e->nCat; k++) {
            const struct vt_diffcat *c = &e->aCat[k];
            fmt_cat(c, zN, sizeof zN);
            fputs("    ", f);
            vt__put_text(f, zN, VT_ESC_LINE);
            int nPad = 42 - (int)vt__utf8_chars(zN, strlen(zN)); /* the longest category name is 41 */
            fprintf(f, "%*s %s\n", nPad > 1 ? nPad : 1, "", fmt_change(c->base, c->cur, zC, sizeof zC));
        }
    }
    fprintf(f, "\n== Sites that changed (highest live bytes in a process) ==\n");
    if (d->nSite == 0) fputs("  none by more than the threshold\n", f);
    for (int i = 0; i < d->nSite && i < nTop; i++) {
        const struct vt_diffsite *s = &d->aSite[i];
        fprintf(f, "  %-6s %s  ", azChange[s->change], fmt_change(s->base, s->cur, zC, sizeof zC));
        vt__put_text(f, s->zSite, VT_ESC_LINE);
        fputc('\n', f);
    }
    if (d->nSite > nTop) fprintf(f, "  ... %d more (--top, --format json)\n", d->nSite - nTop);
    if (d->nPhase) fprintf(f, "\n== Phases ==\n");
    for (int i = 0; i < d->nPhase; i++) {
        const struct vt_diffphase *p = &d->aPhase[i];
        fputs("  ", f);
        vt__put_text(f, p->zProc, VT_ESC_LINE);
        fprintf(f, ": %s phase '", vt__phase_kind_name(p->kind));
        vt__put_text(f, p->zName, VT_ESC_LINE);
        fprintf(f, "', peak %s\n", fmt_change(p->base, p->cur, zC, sizeof zC));
    }
    fprintf(f, "\n== Findings that appeared, vanished or changed severity ==\n");
    for (int g = 0; g < FIND_GROUPS; g++)
        for (int i = 0; i < d->nFind; i++) {
            if (find_group(&d->aFind[i]) != g) continue;
            fmt_find(d, &d->aFind[i], zL, sizeof zL);
            fprintf(f, "  %s: ", azFindLabel[g]);
            vt__put_text(f, zL, VT_ESC_LINE);
            fputc('\n', f);
            nShown++;
        }
    if (!nShown) fputs("  none: the same root causes at the same severities in both\n", f);
    fmt_max(d, zL, sizeof zL);
    if (zL[0]) {
        fputc('\n', f);
        vt__put_text(f, zL, VT_ESC_LINE);
        fputc('\n', f);
    }
    return ferror(f) ? -1 : 0;
}

/* A JSON key for a side that is not in its run (VT_DIFF_NONE): null; else the key's name of its figure k. */
static const char *jpeak_of(int64_t v, int k)
{
    return v == VT_DIFF_NONE ? NULL : vt__fig_headline_name(v >= 0 ? k : VT_HEAD_NONE, 1);
}

/* A JSON integer, or null when negative. */
static void jint(FILE *f, const char *zKey, int64_t v, int bComma)
{
    fprintf(f, "\"%s\": ", zKey);
    if (v < 0) fputs("null", f);
    else fprintf(f, "%lld", (long long)v);
    if (bComma) fputs(", ", f);
}

/* Growth in percent of base to cur, or null. */
static void jpct(FILE *f, const char *zKey, int64_t base, int64_t cur, int bComma)
{
    fprintf(f, "\"%s\": ", zKey);
    if (base > 0 && cur >= 0) fprintf(f, "%.2f", 100.0 * (double)(cur - base) / (double)base);
    else fputs("null", f);
    if (bComma) fputs(", ", f);
}

/* The runs' traces as a JSON array of paths. */
static void jpaths(FILE *f, const struct vt_result *r)
{
    fputc('[', f);
    for (int i = 0; i < r->nTrace; i++) {
        if (i) fputs(", ", f);
        vt__json_str(f, r->aTrace[i].f.zPath);
    }
    fputc(']', f);
}

int vt__diff_json(FILE *f, const struct vt_diff *d)
{
    fprintf(f, "{\n  \"vramtrace_diff_version\": %d,\n  \"generator\": \"vramtrace %s\",\n  \"base\": ", VT_DIFF_VERSION,
            VT_VERSION);
    jpaths(f, d->pBase);
    fputs(",\n  \"new\": ", f);
    jpaths(f, d->pNew);
    fputs(",\n  \"warning\": ", f);
    vt__json_str(f, d->zWarn);
    fputs(",\n  \"devices\": [", f);
    for (int i = 0; i < d->nDev; i++) {
        const struct vt_diffdev *e = &d->aDev[i];
        fprintf(f, "%s\n    {\"process\": ", i ? "," : "");
        vt__json_str(f, e->zProc);
        fprintf(f, ", \"base_trace\": ");
        if (e->iBase >= 0) fprintf(f, "%d", e->iBase);
        else fputs("null", f);
        fprintf(f, ", \"new_trace\": ");
        if (e->iNew >= 0) fprintf(f, "%d", e->iNew);
        else fputs("null", f);
        fprintf(f, ", \"device\": %d, \"name\": ", e->id);
        vt__json_str(f, e->zName[0] ? e->zName : NULL);
        fputs(", ", f);
        jint(f, "base_peak_bytes", e->base, 1);
        jint(f, "new_peak_bytes", e->cur, 1);
        jpct(f, "growth_pct", e->base, e->cur, 1);
        fputs("\"base_peak_of\": ", f);
        vt__json_str(f, jpeak_of(e->base, e->aOf[0]));
        fputs(", \"new_peak_of\": ", f);
        vt__json_str(f, jpeak_of(e->cur, e->aOf[1]));
        fputs(", ", f);
        jint(f, "base_allocated_bytes", e->baseAlloc, 1);
        jint(f, "new_allocated_bytes", e->curAlloc, 1);
        jint(f, "base_breakdown_bytes", e->baseSum, 1);
        jint(f, "new_breakdown_bytes", e->curSum, 1);
        fputs("\"base_breakdown_basis\": ", f);
        vt__json_str(f, e->azBasis[0]);
        fputs(", \"new_breakdown_basis\": ", f);
        vt__json_str(f, e->azBasis[1]);
        fputs(", \"breakdown\": [", f);
        for (int k = 0; k < e->nCat; k++) {
            const struct vt_diffcat *c = &e->aCat[k];
            fprintf(f, "%s{\"category\": \"%s\", \"owner\": ", k ? ", " : "", vt__cat_key(c->cat));
            vt__json_str(f, c->zOwner[0] ? c->zOwner : NULL);
            fputs(", ", f);
            jint(f, "base_bytes", c->base, 1);
            jint(f, "new_bytes", c->cur, 1);
            fputs("\"delta_bytes\": ", f);
            if (c->base >= 0 && c->cur >= 0) fprintf(f, "%lld}", (long long)(c->cur - c->base));
            else fputs("null}", f);
        }
        fputs("]}", f);
    }
    fputs("\n  ],\n  \"sites\": [", f);
    for (int i = 0; i < d->nSite; i++) {
        const struct vt_diffsite *s = &d->aSite[i];
        fprintf(f, "%s\n    {\"site\": ", i ? "," : "");
        vt__json_str(f, s->zSite);
        fprintf(f, ", \"change\": \"%s\", ", azChange[s->change]);
        jint(f, "base_bytes", s->base, 1);
        jint(f, "new_bytes", s->cur, 0);
        fputc('}', f);
    }
    fputs("\n  ],\n  \"phases\": [", f);
    for (int i = 0; i < d->nPhase; i++) {
        const struct vt_diffphase *p = &d->aPhase[i];
        fprintf(f, "%s\n    {\"process\": ", i ? "," : "");
        vt__json_str(f, p->zProc);
        fprintf(f, ", \"kind\": \"%s\", \"name\": ", vt__phase_kind_name(p->kind));
        vt__json_str(f, p->zName);
        fputs(", ", f);
        jint(f, "base_peak_bytes", p->base, 1);
        jint(f, "new_peak_bytes", p->cur, 0);
        fputc('}', f);
    }
    fputs("\n  ],\n  \"findings\": {", f);
    for (int g = 0; g < FIND_GROUPS; g++) {
        int n = 0;
        fprintf(f, "%s\"%s\": [", g ? ", " : "", azFindJson[g]);
        for (int i = 0; i < d->nFind; i++) {
            const struct vt_finding *x = d->aFind[i].f;
            if (find_group(&d->aFind[i]) != g) continue;
            fprintf(f, "%s\n    {\"trace\": %d, \"kind\": ", n++ ? "," : "", x->trace);
            vt__json_str(f, x->zKind);
            if (g == FIND_CHANGED)
                fprintf(f, ", \"base_trace\": %d, \"base_severity\": \"%s\"", d->aFind[i].pBaseF->trace,
                        vt__sev_name(d->aFind[i].pBaseF->severity));
            fprintf(f, ", \"severity\": \"%s\", \"title\": ", vt__sev_name(x->severity));
            vt__json_str(f, x->zTitle);
            fputs(", \"site\": ", f);
            vt__json_str(f, x->zSite);
            fputs(", \"phase\": ", f);
            vt__json_str(f, x->zPhase[0] ? x->zPhase : NULL);
            fprintf(f, ", \"bytes\": %lld}", (long long)x->bytes);
        }
        fputc(']', f);
    }
    fputs("},\n  \"max_growth_pct\": ", f);
    if (d->iMaxGrowth >= 0) fprintf(f, "%.2f", d->maxGrowthPct);
    else fputs("null", f);
    fputs("\n}\n", f);
    return ferror(f) ? -1 : 0;
}

/* The comparison's head in Markdown (bHtml 0) or HTML: the runs' traces, the warning, the largest change. */
static void head(FILE *f, const struct vt_diff *d, int bHtml)
{
    static const char *const azMd[] = {"- base: `", "`\n- new: `", "`\n", "- **warning**: ", "\n", "- ", "\n"};
    static const char *const azHtml[] = {"<p>base: <code>", "</code><br>new: <code>", "</code></p>\n",
                                         "<p class=\"warn\">warning: ", "</p>\n", "<p>", "</p>\n"};
    const char *const *az = bHtml ? azHtml : azMd;
    enum vt_esc esc = bHtml ? VT_ESC_HTML : VT_ESC_MD;
    char zB[600], zNew[600], zL[600];
    fmt_paths(d->pBase, zB, sizeof zB);
    fmt_paths(d->pNew, zNew, sizeof zNew);
    fmt_max(d, zL, sizeof zL);
    fputs(az[0], f);
    vt__put_text(f, zB, esc);
    fputs(az[1], f);
    vt__put_text(f, zNew, esc);
    fputs(az[2], f);
    for (int k = 0; k < 2; k++) {
        const char *z = k ? zL : d->zWarn;
        if (!z || !z[0]) continue;
        fputs(az[3 + 2 * k], f);
        vt__put_text(f, z, esc);
        fputs(az[4 + 2 * k], f);
    }
}

int vt__diff_markdown(FILE *f, const struct vt_diff *d, int nTop)
{
    char zL[1400], zC[200], zN[400];
    fputs("# vramtrace diff\n\n", f);
    head(f, d, 0);
    fputs("\n## Device peaks\n\n| device | category | base -> new |\n|---|---|---|\n", f);
    for (int i = 0; i < d->nDev; i++) {
        const struct vt_diffdev *e = &d->aDev[i];
        fputs("| ", f);
        vt__put_text(f, fmt_dev(e, zN, sizeof zN), VT_ESC_MD);
        fputs(" | **peak** | ", f);
        vt__put_text(f, fmt_peak(e, zL, sizeof zL), VT_ESC_MD);
        fputs(" |\n", f);
        if (e->nCat) {
            fputs("| | *", f);
            vt__put_text(f, fmt_basis(e, zN, sizeof zN), VT_ESC_MD);
            fprintf(f, "* | %s |\n", fmt_change(e->baseSum, e->curSum, zC, sizeof zC));
        }
        for (int k = 0; k < e->nCat; k++) {
            fputs("| | ", f);
            vt__put_text(f, fmt_cat(&e->aCat[k], zN, sizeof zN), VT_ESC_MD);
            fprintf(f, " | %s |\n", fmt_change(e->aCat[k].base, e->aCat[k].cur, zC, sizeof zC));
        }
    }
    fputs("\n## Sites that changed\n\n| change | base -> new | site |\n|---|---|---|\n", f);
    for (int i = 0; i < d->nSite && i < nTop; i++) {
        fprintf(f, "| %s | %s | ", azChange[d->aSite[i].change], fmt_change(d->aSite[i].base, d->aSite[i].cur, zC, sizeof zC));
        vt__put_text(f, d->aSite[i].zSite, VT_ESC_MD);
        fputs(" |\n", f);
    }
    if (d->nPhase) fputs("\n## Phases\n\n| process | phase | kind | peak, base -> new |\n|---|---|---|---|\n", f);
    for (int i = 0; i < d->nPhase; i++) {
        const struct vt_diffphase *p = &d->aPhase[i];
        fputs("| ", f);
        vt__put_text(f, p->zProc, VT_ESC_MD);
        fputs(" | ", f);
        vt__put_text(f, p->zName, VT_ESC_MD);
        fprintf(f, " | %s | %s |\n", vt__phase_kind_name(p->kind), fmt_change(p->base, p->cur, zC, sizeof zC));
    }
    fputs("\n## Findings that appeared, vanished or changed severity\n\n", f);
    if (d->nFind == 0) fputs("None: the same root causes at the same severities in both.\n", f);
    for (int g = 0; g < FIND_GROUPS; g++)
        for (int i = 0; i < d->nFind; i++) {
            if (find_group(&d->aFind[i]) != g) continue;
            fmt_find(d, &d->aFind[i], zL, sizeof zL);
            fprintf(f, "- **%s**: ", azFindLabel[g]);
            vt__put_text(f, zL, VT_ESC_MD);
            fputc('\n', f);
        }
    return ferror(f) ? -1 : 0;
}

/* Device entry e's categories as the parts of one side (bNew) into a (at most n); returns how many. */
static int side_parts(const struct vt_diffdev *e, int bNew, struct vt_bdpart *a, int n)
{
    int k = 0;
    for (int i = 0; i < e->nCat && k < n; i++) {
        int64_t v = bNew ? e->aCat[i].cur : e->aCat[i].base;
        if (v <= 0) continue;
        memset(&a[k], 0, sizeof a[k]);
        a[k].cat = e->aCat[i].cat;
        a[k].bytes = v;
        snprintf(a[k].zOwner, sizeof a[k].zOwner, "%s", e->aCat[i].zOwner);
        k++;
    }
    return k;
}

int vt__diff_html(FILE *f, const struct vt_diff *d, int nTop)
{
    char zL[1400], zC[200], zN[400];
    struct vt_bdpart aPart[64];
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>vramtrace diff</title>\n"
          "<style>body{font-family:sans-serif;max-width:1100px;margin:1em auto;color:#222}"
          "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;"
          "font-size:13px}.warn{color:#a30}.new{color:#a30}.gone{color:#070}</style></head><body>\n"
          "<h1>vramtrace diff</h1>\n",
          f);
    head(f, d, 1);
    fputs("<h2>Device peaks</h2>\n", f);
    for (int i = 0; i < d->nDev; i++) {
        const struct vt_diffdev *e = &d->aDev[i];
        int64_t scale = e->baseSum > e->curSum ? e->baseSum : e->curSum; /* the bars: the parts, at one scale */
        fputs("<h3>", f);
        vt__put_text(f, fmt_dev(e, zN, sizeof zN), VT_ESC_HTML);
        fputs(": ", f);
        vt__put_text(f, fmt_peak(e, zL, sizeof zL), VT_ESC_HTML);
        fputs("</h3>\n", f);
        if (e->nCat) {
            fputs("<p>", f);
            vt__put_text(f, fmt_basis(e, zN, sizeof zN), VT_ESC_HTML);
            fprintf(f, ": %s</p>\n", fmt_change(e->baseSum, e->curSum, zC, sizeof zC));
        }
        vt__html_bdbar(f, aPart, side_parts(e, 0, aPart, 64), scale, "base");
        vt__html_bdbar(f, aPart, side_parts(e, 1, aPart, 64), scale, "new");
        fputs("<table><tr><th></th><th>category</th><th>base -&gt; new</th></tr>\n", f);
        for (int k = 0; k < e->nCat; k++) {
            fprintf(f, "<tr><td><span style=\"display:inline-block;width:12px;height:12px;background:%s\"></span></td><td>",
                    vt__cat_color(e->aCat[k].cat));
            vt__put_text(f, fmt_cat(&e->aCat[k], zN, sizeof zN), VT_ESC_HTML);
            fprintf(f, "</td><td>%s</td></tr>\n", fmt_change(e->aCat[k].base, e->aCat[k].cur, zC, sizeof zC));
        }
        fputs("</table>\n", f);
    }
    fputs("<h2>Sites that changed</h2>\n<table><tr><th>change</th><th>base -&gt; new</th><th>site</th></tr>\n", f);
    for (int i = 0; i < d->nSite && i < nTop; i++) {
        fprintf(f, "<tr><td>%s</td><td>%s</td><td>", azChange[d->aSite[i].change],
                fmt_change(d->aSite[i].base, d->aSite[i].cur, zC, sizeof zC));
        vt__put_text(f, d->aSite[i].zSite, VT_ESC_HTML);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    if (d->nPhase) fputs("<h2>Phases</h2>\n<table><tr><th>process</th><th>phase</th><th>kind</th><th>peak</th></tr>\n", f);
    for (int i = 0; i < d->nPhase; i++) {
        const struct vt_diffphase *p = &d->aPhase[i];
        fputs("<tr><td>", f);
        vt__put_text(f, p->zProc, VT_ESC_HTML);
        fputs("</td><td>", f);
        vt__put_text(f, p->zName, VT_ESC_HTML);
        fprintf(f, "</td><td>%s</td><td>%s</td></tr>\n", vt__phase_kind_name(p->kind), fmt_change(p->base, p->cur, zC, sizeof zC));
    }
    if (d->nPhase) fputs("</table>\n", f);
    fputs("<h2>Findings that appeared, vanished or changed severity</h2>\n<ul>\n", f);
    for (int g = 0; g < FIND_GROUPS; g++)
        for (int i = 0; i < d->nFind; i++) {
            if (find_group(&d->aFind[i]) != g) continue;
            fmt_find(d, &d->aFind[i], zL, sizeof zL);
            fprintf(f, "<li class=\"%s\">%s: ", g == FIND_APPEARED ? "new" : g == FIND_VANISHED ? "gone" : "changed",
                    azFindLabel[g]);
            vt__put_text(f, zL, VT_ESC_HTML);
            fputs("</li>\n", f);
        }
    if (d->nFind == 0) fputs("<li>none: the same root causes at the same severities in both</li>\n", f);
    fputs("</ul>\n</body></html>\n", f);
    return ferror(f) ? -1 : 0;
}
