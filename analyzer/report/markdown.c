/* Report: Markdown (findings first, then one section per process). */
#include "report.h"

#include <stdlib.h>
#include <string.h>

/* A breakdown as a table under heading zWhat ("device 0", "the OOM at 1.2 s"); t: a device's peak (its moment
 * said), NULL an OOM's. */
static void breakdown_md(FILE *f, const struct vt_trace *t, const char *zWhat, const struct vt_breakdown *b)
{
    char zH[300], zB[32], zP[16], zN[128];
    fputs("\n**", f);
    vt__put_text(f, zWhat, VT_ESC_MD);
    fprintf(f, "**: %s\n\n| category | bytes | share | evidence |\n|---|---|---|---|\n", vt__fmt_bdhead(t, b, zH, sizeof zH));
    for (int k = 0; k < b->n; k++) {
        const struct vt_bdpart *p = &b->a[k];
        fputs("| ", f);
        vt__put_text(f, vt__fmt_bdname(p, zN, sizeof zN), VT_ESC_MD);
        fprintf(f, " | %s | %s | ", vt__fmt_bytes(p->bytes, zB, sizeof zB), vt__fmt_bdshare(b, p, zP, sizeof zP));
        vt__put_text(f, p->zEvidence ? p->zEvidence : "", VT_ESC_MD);
        fputs(" |\n", f);
    }
    if (b->zOthers) { /* not a part: its bytes are not known */
        fprintf(f, "| %s | unknown | | ", vt__cat_name(VT_CAT_OTHERS));
        vt__put_text(f, b->zOthers, VT_ESC_MD);
        fputs(" |\n", f);
    }
}

/* What would fit on device d, and each saving with its assumption. */
static void fit_md(FILE *f, const struct vt_device *d)
{
    char zL[700], zS[700];
    if (!vt__fmt_fit(d, zL, sizeof zL)) return;
    fputs("\n- what would fit: ", f);
    vt__put_text(f, zL, VT_ESC_MD);
    fputc('\n', f);
    for (int k = 0; k < d->fit.nAssume; k++) {
        fputs("  - assuming ", f);
        vt__put_text(f, d->fit.azAssume[k], VT_ESC_MD);
        fputc('\n', f);
    }
    for (int k = 0; k < d->fit.nSave; k++) {
        fputs("  - saves: ", f);
        vt__put_text(f, vt__fmt_saving(&d->fit.aSave[k], zS, sizeof zS), VT_ESC_MD);
        fputc('\n', f);
    }
}

/* The whole Markdown report; 0, or -1 on a write error. */
int vt__report_markdown(FILE *f, const struct vt_result *r)
{
    const struct vt_opts *o = r->pOpts;
    char zB[32], zA[32], zZ[32], zLine[200], zW[256], zWin[80];
    fprintf(f, "# vramtrace analysis\n\n%d trace%s, %d finding%s.\n\n", r->nTrace, r->nTrace == 1 ? "" : "s",
            r->nFind, r->nFind == 1 ? "" : "s");
    if (r->nFind) {
        fprintf(f, "## Findings (worst first)\n\n");
        fprintf(f, "| # | severity | kind | process | finding | bytes | phase |\n|---|---|---|---|---|---|---|\n");
        for (int i = 0; i < r->nFind; i++) {
            const struct vt_finding *x = &r->aFind[i];
            vt__fmt_finding_bytes(x, zB, sizeof zB);
            vt__fmt_ranks(r, x, zW, sizeof zW);
            if (!zW[0]) vt__fmt_process(&r->aTrace[x->trace], zW, sizeof zW);
            fprintf(f, "| %d | %s | %s | ", i + 1, vt__sev_name(x->severity), x->zKind);
            vt__put_text(f, zW, VT_ESC_MD);
            fputs(" | ", f);
            vt__put_text(f, x->zTitle, VT_ESC_MD);
            fprintf(f, " | %s | ", zB);
            vt__put_text(f, x->zPhase, VT_ESC_MD);
            fputs(" |\n", f);
        }
        for (int i = 0; i < r->nFind; i++) {
            const struct vt_finding *x = &r->aFind[i];
            const struct vt_trace *t = &r->aTrace[x->trace];
            vt__fig_fmt_window(&t->f, x->firstTs, x->lastTs, zWin, sizeof zWin);
            /* every string a trace may have supplied (sites, phase names, paths in the evidence) escaped */
            fprintf(f, "\n### %d. [%s] ", i + 1, vt__sev_name(x->severity));
            vt__put_text(f, x->zTitle, VT_ESC_MD);
            fprintf(f, "\n\n- **kind**: %s; **count**: %lld; **time**: %s%s", x->zKind, (long long)x->count, zWin,
                    x->zPhase[0] ? "; **phase**: " : "");
            vt__put_text(f, x->zPhase, VT_ESC_MD);
            fputc('\n', f);
            vt__fmt_ranks(r, x, zW, sizeof zW);
            if (zW[0]) fprintf(f, "- **processes**: %s%s\n", zW, x->aTraces && x->nTraces > 1 ? " (figures of the worst)" : "");
            vt__fmt_spread(x, zW, sizeof zW);
            if (zW[0]) fprintf(f, "- **occurrences**: %s\n", zW);
            if (x->zSite) {
                fputs("- **where**: `", f);
                vt__put_text(f, x->zSite, VT_ESC_MD);
                fputs("`\n", f);
            }
            fputs("- **evidence**: ", f);
            vt__put_text(f, x->zEvidence, VT_ESC_MD);
            fputs("\n- **fix**: ", f);
            vt__put_text(f, x->zFix, VT_ESC_MD);
            fputc('\n', f);
        }
    } else {
        char zNone[200];
        fprintf(f, "%s\n", vt__fmt_no_findings(r, zNone, sizeof zNone));
    }
    for (int i = 0; i < r->nTrace; i++) {
        const struct vt_trace *t = &r->aTrace[i];
        fputs("\n## Process ", f);
        vt__put_text(f, vt__fmt_process(t, zW, sizeof zW), VT_ESC_MD);
        fputs(": `", f);
        vt__put_text(f, t->f.zPath, VT_ESC_MD);
        fputs("`\n\n", f);
        if (t->f.fig.duration >= 0) vt__fmt_ns(t->f.fig.duration, zA, sizeof zA);
        else snprintf(zA, sizeof zA, "unknown");
        vt__fmt_bytes(t->lc.liveEndBytes, zB, sizeof zB);
        if (vt__fig_counts_unknown(&t->f)) fprintf(f, "- duration %s; %s\n", zA, vt__fig_counts_unknown(&t->f));
        else
            fprintf(f, "- duration %s; %lld allocation%s, %lld freed, %lld live %s (%s)\n", zA,
                    (long long)t->lc.nAlloc, t->lc.nAlloc == 1 ? "" : "s", (long long)t->lc.nFree, (long long)t->lc.nLiveEnd, vt__end_said(t), zB);
        if (vt__fig_blocks_text(&t->f, zLine, sizeof zLine)) fprintf(f, "- %s\n", zLine);
        if (!vt__fig_counts_unknown(&t->f)) /* no free is known to be matched or not (as the text says none) */
            fprintf(f, "- %s\n", vt__fmt_free_faults(t, zLine, sizeof zLine));
        fprintf(f, "- level: %s\n", vt__level_name(t->f.fig.level));
        if (t->ph.n) {
            fprintf(f, "- phases from %s (%d phase%s, %s)\n", t->ph.zSource, t->ph.n, t->ph.n == 1 ? "" : "s",
                    vt__fmt_phase_iters(t, zLine, sizeof zLine));
        } else {
            char zP[600];
            vt__fmt_no_phases(t, zP, sizeof zP);
            fputs("- phases: ", f);
            vt__put_text(f, zP, VT_ESC_MD);
            fputc('\n', f);
        }
        for (int k = 0; k < t->f.nNote; k++) {
            fputs("- note: ", f);
            vt__put_text(f, t->f.azNote[k], VT_ESC_MD);
            fputc('\n', f);
        }
        fprintf(f, "\n| device | peak | live at peak, by site and kind |\n|---|---|---|\n");
        for (int d = 0; d < t->f.fig.nDev; d++) { /* the figure source's peaks, what was live at them */
            const struct vt_figdev *fd = &t->f.fig.aDev[d];
            const struct vt_device *dv = vt__report_device(t, fd->acct);
            char zD[300], zP[600];
            fputs("| ", f);
            vt__put_text(f, vt__fmt_account(t, fd->acct, zD, sizeof zD), VT_ESC_MD);
            fputs(" | ", f);
            vt__put_text(f, vt__fig_peak_text(&t->f, fd, zP, sizeof zP), VT_ESC_MD);
            fputs(" | ", f);
            for (int k = 0; dv && k < vt__report_groups(r, dv); k++) {
                char zG[600];
                if (!k && vt__fmt_atpeak(t, dv, zG, sizeof zG)[0]) fprintf(f, "%s: ", zG); /* the breakdown's moment */
                vt__fmt_group(t, &dv->aGroup[k], zG, sizeof zG);
                fputs(k ? "; " : "", f);
                vt__put_text(f, zG, VT_ESC_MD);
            }
            if (dv && vt__fmt_groups_more(r, dv, zP, sizeof zP)) { /* the list sums to the peak, as in text */
                fputs("; ", f);
                vt__put_text(f, zP, VT_ESC_MD);
            }
            fputs(" |\n", f);
        }
        for (int d = 0; d < t->tl.nDev; d++) {
            char zR[600], zD[300];
            if (!vt__fmt_reconcile(t, &t->tl.aDev[d], zR, sizeof zR)) continue;
            fprintf(f, "\n- %s: ", vt__fmt_account(t, t->tl.aDev[d].id, zD, sizeof zD));
            vt__put_text(f, zR, VT_ESC_MD);
            fputc('\n', f);
        }
        for (int d = 0; d < t->tl.nDev; d++) {
            char zD[160];
            if (!t->tl.aDev[d].bd.n) continue;
            breakdown_md(f, t, vt__fmt_device(&t->tl.aDev[d], zD, sizeof zD), &t->tl.aDev[d].bd);
            fit_md(f, &t->tl.aDev[d]);
        }
        for (int k = 0, nShown = 0; k < t->nOom && nShown < 3; k++) {
            char zW2[96], zAt[32];
            if (!vt__report_oom_shown(t, k)) continue;
            nShown++;
            vt__fmt_at(t, t->aOom[k].ts, zAt, sizeof zAt);
            snprintf(zW2, sizeof zW2, "at the OOM at %s (device %d)", zAt, t->aOom[k].device);
            breakdown_md(f, NULL, zW2, &t->aOom[k].bd);
        }
        if (t->ph.n) {
            fprintf(f, "\n| phase | kind | start | end | peak | iterations | largest site at peak |\n"
                       "|---|---|---|---|---|---|---|\n");
            for (int k = 0; k < t->ph.n; k++) {
                const struct vt_phase *p = &t->ph.a[k];
                vt__fig_fmt_bound(&t->f, p->start, -1, zA, sizeof zA); /* widened: a window to paste */
                vt__fig_fmt_bound(&t->f, p->end, +1, zZ, sizeof zZ);
                vt__fmt_phase_peak(t, p, zB, sizeof zB);
                fputs("| ", f);
                vt__put_text(f, p->zName, VT_ESC_MD);
                fprintf(f, " | %s | %s | %s | %s | %d | ", vt__phase_kind_name(p->kind), zA, zZ, zB, p->nIter);
                if (p->nGroup > 0) {
                    char zG[600];
                    vt__fmt_group(t, &p->aGroup[0], zG, sizeof zG);
                    vt__put_text(f, zG, VT_ESC_MD);
                }
                fputs(" |\n", f);
            }
        }
        if (o->bBySite && t->sites.n) {
            int *aIdx, nShown = vt__report_sites(r, t, &aIdx);
            fprintf(f, "\n| site | allocations | total | peak live | live at exit |\n|---|---|---|---|---|\n");
            for (int k = 0; k < nShown; k++) {
                const struct vt_site *s = &t->sites.a[aIdx[k]];
                char zP[32], zE[32];
                vt__fmt_bytes(s->totalBytes, zB, sizeof zB);
                vt__fmt_bytes(s->peakLiveBytes, zP, sizeof zP);
                vt__fmt_bytes(s->liveBytes, zE, sizeof zE);
                fputs("| ", f);
                vt__put_text(f, s->zSite, VT_ESC_MD);
                fprintf(f, " | %lld | %s | %s | %s |\n", (long long)s->nAlloc, zB, zP, zE);
            }
            free(aIdx);
        }
    }
    if (r->nTrace > 1) {
        int64_t sum = 0;
        int nUnknown = 0;
        fprintf(f, "\n## All processes\n\n| process | device peak | findings | worst |\n|---|---|---|---|\n");
        for (int i = 0; i < r->nTrace; i++) {
            const struct vt_trace *t = &r->aTrace[i];
            int worst, n = vt__trace_findings(r, i, &worst);
            if (vt__fig_trace_peak(&t->f) >= 0) { /* the headline peak (figures.h) */
                sum += vt__fig_trace_peak(&t->f);
                vt__fmt_bytes(vt__fig_trace_peak(&t->f), zB, sizeof zB);
            } else {
                nUnknown++;
                snprintf(zB, sizeof zB, "unknown");
            }
            fputs("| ", f);
            vt__put_text(f, vt__fmt_process(t, zW, sizeof zW), VT_ESC_MD);
            fprintf(f, " | %s | %d | %s |\n", zB, n, worst >= 0 ? vt__sev_name(worst) : "-");
        }
        vt__fmt_bytes(sum, zB, sizeof zB);
        if (nUnknown == r->nTrace) fprintf(f, "\nSum of per-process device peaks: unknown.\n");
        else fprintf(f, "\nSum of per-process device peaks: %s%s.\n", zB,
                     nUnknown ? ", without the processes whose peak is unknown" : "");
    }
    return ferror(f) ? -1 : 0;
}
