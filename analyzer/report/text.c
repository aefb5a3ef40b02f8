/* Report: plain text for a terminal, worst findings first, then one section per process. */
#include "report.h"

#include <stdlib.h>
#include <string.h>

#define WIDTH 100
#define VT_SCREEN_FINDINGS 10 /* findings on the first screen, worst first (--all: every one) */
#define VT_SCREEN_PROCESSES 8 /* more processes than this: their sections only with --all */

/* Print z word-wrapped to WIDTH, first line after zLead, following lines indented by nIndent. */
static void wrap(FILE *f, const char *zLead, int nIndent, const char *z)
{
    int col = fprintf(f, "%s", zLead), bFirst = 1;
    if (!z) z = "";
    while (*z == ' ') z++;
    while (*z) {
        const char *zEnd = z;
        while (*zEnd && *zEnd != ' ') zEnd++;
        int len = (int)(zEnd - z);
        if (!bFirst && col + 1 + len > WIDTH) {
            fprintf(f, "\n%*s", nIndent, "");
            col = nIndent;
        } else if (!bFirst) {
            fputc(' ', f);
            col++;
        }
        vt__put_esc(f, z, (size_t)len, VT_ESC_LINE, VT_TEXT_CAP); /* its own newlines only */
        col += len;
        bFirst = 0;
        z = zEnd;
        while (*z == ' ') z++;
    }
    fputc('\n', f);
}

/* One finding: severity, title, size and time, where, evidence, fix. */
static void finding(FILE *f, const struct vt_result *r, const struct vt_finding *x)
{
    const struct vt_trace *t = &r->aTrace[x->trace];
    char zHead[512], zB[32], zA[80], zW[256], zLine[512];
    char zSev[16];
    int i;
    snprintf(zSev, sizeof zSev, "%s", vt__sev_name(x->severity));
    for (i = 0; zSev[i]; i++) zSev[i] = (char)(zSev[i] >= 'a' && zSev[i] <= 'z' ? zSev[i] - 32 : zSev[i]);
    snprintf(zHead, sizeof zHead, "[%s] %s: ", zSev, x->zKind);
    wrap(f, zHead, 4, x->zTitle);
    vt__fmt_finding_bytes(x, zB, sizeof zB);
    vt__fig_fmt_window(&t->f, x->firstTs, x->lastTs, zA, sizeof zA);
    vt__fmt_ranks(r, x, zW, sizeof zW);
    snprintf(zLine, sizeof zLine, "%s%s%s, %lld event%s, %s%s%s%s", zW, zW[0] ? "; " : "", zB,
             (long long)x->count, x->count == 1 ? "" : "s", zA, x->zPhase[0] ? "; phase " : "", x->zPhase,
             x->aTraces && x->nTraces > 1 ? " (figures of the worst)" : "");
    wrap(f, "    ", 4, zLine);
    vt__fmt_spread(x, zLine, sizeof zLine);
    if (zLine[0]) wrap(f, "    ", 4, zLine);
    if (x->zSite) wrap(f, "    where:    ", 14, x->zSite);
    wrap(f, "    evidence: ", 14, x->zEvidence);
    wrap(f, "    fix:      ", 14, x->zFix);
}

/* A breakdown: its heading, then each part (bytes, share, name: evidence), at indent nIndent. */
static void breakdown_text(FILE *f, const struct vt_trace *t, const struct vt_breakdown *b, int nIndent)
{
    char zLead[64], zLine[1400], zH[300], zB[32], zP[16], zN[128];
    snprintf(zLead, sizeof zLead, "%*s", nIndent, "");
    wrap(f, zLead, nIndent + 2, vt__fmt_bdhead(t, b, zH, sizeof zH));
    for (int k = 0; k < b->n; k++) {
        const struct vt_bdpart *p = &b->a[k];
        snprintf(zLead, sizeof zLead, "%*s%9s %4s  ", nIndent + 2, "", vt__fmt_bytes(p->bytes, zB, sizeof zB),
                 vt__fmt_bdshare(b, p, zP, sizeof zP));
        snprintf(zLine, sizeof zLine, "%s: %s", vt__fmt_bdname(p, zN, sizeof zN), p->zEvidence ? p->zEvidence : "");
        wrap(f, zLead, nIndent + 18, zLine);
    }
    if (b->zOthers) { /* not a part: its bytes are not known */
        snprintf(zLead, sizeof zLead, "%*s%9s %4s  ", nIndent + 2, "", "unknown", "");
        snprintf(zLine, sizeof zLine, "%s: %s", vt__cat_name(VT_CAT_OTHERS), b->zOthers);
        wrap(f, zLead, nIndent + 18, zLine);
    }
}

/* One process: lifetime counts, device peaks with what was live, phases, notes, sites. */
static void trace_section(FILE *f, const struct vt_result *r, int iTrace)
{
    const struct vt_trace *t = &r->aTrace[iTrace];
    const struct vt_opts *o = r->pOpts;
    char zW[300], zB[32], zT[32], zLine[1024], zB2[200];
    fputs("\n== Process ", f);
    vt__put_text(f, vt__fmt_process(t, zW, sizeof zW), VT_ESC_LINE);
    fputs(": ", f);
    vt__put_text(f, t->f.zPath, VT_ESC_LINE);
    fputs(" ==\n", f);
    if (t->f.zCmd[0]) wrap(f, "  command: ", 11, t->f.zCmd);
    if (t->f.fig.duration >= 0) vt__fmt_ns(t->f.fig.duration, zT, sizeof zT);
    else snprintf(zT, sizeof zT, "unknown");
    vt__fmt_bytes(t->lc.liveEndBytes, zB, sizeof zB);
    if (vt__fig_counts_unknown(&t->f))
        snprintf(zLine, sizeof zLine, "duration %s; %s; level: %s", zT, vt__fig_counts_unknown(&t->f),
                 vt__level_name(t->f.fig.level));
    else
        snprintf(zLine, sizeof zLine, "duration %s; %lld allocation%s, %lld freed, %lld live %s (%s); %s; level: %s", zT,
                 (long long)t->lc.nAlloc, t->lc.nAlloc == 1 ? "" : "s", (long long)t->lc.nFree, (long long)t->lc.nLiveEnd, vt__end_said(t), zB,
                 vt__fmt_free_faults(t, zB2, sizeof zB2), vt__level_name(t->f.fig.level));
    if (vt__fig_blocks_text(&t->f, zB2, sizeof zB2)) {
        size_t k = strlen(zLine);
        snprintf(zLine + k, sizeof zLine - k, "; %s", zB2);
    }
    wrap(f, "  ", 2, zLine);
    /* each account's peaks as the figure source says them, with what was live at the peak */
    for (int d = 0; d < t->f.fig.nDev; d++) {
        const struct vt_figdev *fd = &t->f.fig.aDev[d];
        const struct vt_device *dv = vt__report_device(t, fd->acct);
        char zD[300], zP[600];
        vt__fmt_account(t, fd->acct, zD, sizeof zD);
        snprintf(zLine, sizeof zLine, "%s: peak %s", zD, vt__fig_peak_text(&t->f, fd, zP, sizeof zP));
        wrap(f, "  ", 4, zLine);
        if (!dv) continue;
        if (vt__fmt_reconcile(t, dv, zLine, sizeof zLine)) wrap(f, "    ", 4, zLine);
        if (dv->bd.n) breakdown_text(f, t, &dv->bd, 4);
        if (vt__fmt_fit(dv, zLine, sizeof zLine)) {
            wrap(f, "    what would fit: ", 6, zLine);
            for (int k = 0; k < dv->fit.nAssume; k++) wrap(f, "      assuming ", 8, dv->fit.azAssume[k]);
            for (int k = 0; k < dv->fit.nSave; k++)
                wrap(f, "      saves: ", 8, vt__fmt_saving(&dv->fit.aSave[k], zLine, sizeof zLine));
        }
        { /* the trace's own peak (a window's, for an import) at the breakdown's moment; the groups aligned under it */
            char zLead[128], zPad[128], zAt[64];
            int nLead;
            vt__fmt_atpeak(t, dv, zAt, sizeof zAt);
            nLead = snprintf(zLead, sizeof zLead, "    live at %speak%s%s%s: ",
                             fd->procReserved >= 0 || fd->procAllocated >= 0 ? "the window's " : "", zAt[0] ? " (" : "",
                             zAt, zAt[0] ? ")" : "");
            snprintf(zPad, sizeof zPad, "%*s", nLead, "");
            for (int k = 0; k < vt__report_groups(r, dv); k++) {
                vt__fmt_group(t, &dv->aGroup[k], zLine, sizeof zLine);
                wrap(f, k ? zPad : zLead, nLead + 2, zLine);
            }
            if (vt__fmt_groups_more(r, dv, zLine, sizeof zLine)) /* said, not dropped in silence */
                wrap(f, zPad, nLead + 2, zLine);
        }
    }
    for (int k = 0, nShown = 0; k < t->nOom; k++) { /* what the memory in use at each OOM was */
        const struct vt_oom *m = &t->aOom[k];
        char zAt[32], zR[32];
        if (!vt__report_oom_shown(t, k)) continue;
        if (nShown++ == 3) {
            int nMore = 0;
            for (int j = k; j < t->nOom; j++) nMore += vt__report_oom_shown(t, j);
            fprintf(f, "  ... the breakdown at %d more OOM%s: --format json\n", nMore, nMore == 1 ? "" : "s");
            break;
        }
        vt__fmt_at(t, m->ts, zAt, sizeof zAt);
        vt__fmt_bytes(m->requested, zR, sizeof zR);
        fprintf(f, "  at the OOM at %s (device %d, %s%s):\n", zAt, m->device, m->requested >= 0 ? zR : "size requested unknown",
                m->requested >= 0 ? " requested" : "");
        breakdown_text(f, NULL, &m->bd, 4); /* its time: in the line above */
    }
    if (t->ph.n) {
        fprintf(f, "  phases (from %s, %s):\n", t->ph.zSource, vt__fmt_phase_iters(t, zLine, sizeof zLine));
        for (int i = 0; i < t->ph.n && i < 12; i++) {
            const struct vt_phase *p = &t->ph.a[i];
            vt__fmt_phase_peak(t, p, zB, sizeof zB);
            size_t nName = vt__utf8_prefix(p->zName, strlen(p->zName), 20); /* an NVTX name: the trace's */
            fprintf(f, "    %-10s ", vt__phase_kind_name(p->kind));
            vt__put_esc(f, p->zName, nName, VT_ESC_LINE, VT_TEXT_NOCAP);
            fprintf(f, "%*s %s, peak %s, %d iteration%s\n", (int)(20 - vt__utf8_chars(p->zName, nName)), "",
                    vt__fig_fmt_window(&t->f, p->start, p->end, zW, sizeof zW), zB, p->nIter, p->nIter == 1 ? "" : "s");
            if (p->nGroup > 0) {
                vt__fmt_group(t, &p->aGroup[0], zLine, sizeof zLine);
                wrap(f, "      largest at its peak: ", 8, zLine);
            }
        }
        if (t->ph.n > 12) fprintf(f, "    ... %d more (see --format json)\n", t->ph.n - 12);
    } else {
        vt__fmt_no_phases(t, zLine, sizeof zLine);
        wrap(f, "  phases: ", 10, zLine);
    }
    for (int i = 0; i < t->f.nNote; i++) wrap(f, "  note: ", 8, t->f.azNote[i]);
    if (o->bBySite) {
        fprintf(f, "  allocation sites (by peak live bytes):\n");
        fprintf(f, "    %8s %10s %10s %10s  %s\n", "allocs", "total", "peak live", "at exit", "site");
        int *aIdx, nShown = vt__report_sites(r, t, &aIdx);
        for (int i = 0; i < nShown; i++) {
            const struct vt_site *s = &t->sites.a[aIdx[i]];
            char zP[32], zE[32];
            vt__fmt_bytes(s->totalBytes, zB, sizeof zB);
            vt__fmt_bytes(s->peakLiveBytes, zP, sizeof zP);
            vt__fmt_bytes(s->liveBytes, zE, sizeof zE);
            /* the line fits the terminal: a long site loses its middle, keeping the ends that tell sites apart */
            fprintf(f, "    %8lld %10s %10s %10s  ", (long long)s->nAlloc, zB, zP, zE);
            vt__put_mid(f, s->zSite, WIDTH - 48, VT_ESC_LINE);
            fputc('\n', f);
        }
        free(aIdx);
    }
}

/* The whole text report; 0, or -1 on a write error. */
int vt__report_text(FILE *f, const struct vt_result *r)
{
    const struct vt_opts *o = r->pOpts;
    int aSev[VT_SEV_HIGH + 1] = {0};
    for (int i = 0; i < r->nFind; i++) aSev[r->aFind[i].severity]++;
    fprintf(f, "vramtrace analyze: %d trace%s, %d finding%s (%d high, %d medium, %d low, %d info)\n", r->nTrace,
            r->nTrace == 1 ? "" : "s", r->nFind, r->nFind == 1 ? "" : "s", aSev[VT_SEV_HIGH], aSev[VT_SEV_MEDIUM],
            aSev[VT_SEV_LOW], aSev[VT_SEV_INFO]);
    if (r->nFind == 0) {
        char zNone[200];
        fprintf(f, "\n");
        wrap(f, "", 0, vt__fmt_no_findings(r, zNone, sizeof zNone));
    }
    else fprintf(f, "\n== Findings, worst first ==\n");
    for (int i = 0; i < r->nFind && (o->bAll || i < VT_SCREEN_FINDINGS); i++) {
        if (i) fputc('\n', f);
        finding(f, r, &r->aFind[i]);
    }
    if (!o->bAll && r->nFind > VT_SCREEN_FINDINGS) { /* the first screen holds the worst; say what is left */
        int aMore[VT_SEV_HIGH + 1] = {0}, nMore = r->nFind - VT_SCREEN_FINDINGS;
        for (int i = VT_SCREEN_FINDINGS; i < r->nFind; i++) aMore[r->aFind[i].severity]++;
        fprintf(f, "\n... %d more finding%s (%d high, %d medium, %d low, %d info): --all shows them, --format json "
                   "lists every one\n",
                nMore, nMore == 1 ? "" : "s", aMore[VT_SEV_HIGH], aMore[VT_SEV_MEDIUM], aMore[VT_SEV_LOW],
                aMore[VT_SEV_INFO]);
    }
    for (int i = 0; i < r->nTrace && (o->bAll || r->nTrace <= VT_SCREEN_PROCESSES); i++) trace_section(f, r, i);
    if (!o->bAll && r->nTrace > VT_SCREEN_PROCESSES)
        fprintf(f, "\n(the sections of each of the %d processes: --all shows them)\n", r->nTrace);
    if (r->nTrace > 1) {
        int64_t sum = 0;
        int nUnknown = 0;
        char zB[32], zW[300];
        fprintf(f, "\n== All processes ==\n");
        for (int i = 0; i < r->nTrace; i++) {
            const struct vt_trace *t = &r->aTrace[i];
            int worst, n;
            if (!o->bAll && i == VT_SCREEN_PROCESSES) { /* the sum and the imbalance below cover them all */
                fprintf(f, "  ... %d more processes (--all shows them)\n", r->nTrace - i);
                for (; i < r->nTrace; i++) {
                    if (vt__fig_trace_peak(&r->aTrace[i].f) >= 0) sum += vt__fig_trace_peak(&r->aTrace[i].f);
                    else nUnknown++;
                }
                break;
            }
            n = vt__trace_findings(r, i, &worst);
            if (vt__fig_trace_peak(&t->f) >= 0) { /* the headline peak (figures.h) */
                int64_t peak = vt__fig_trace_peak(&t->f);
                sum += peak;
                vt__fmt_bytes(peak, zB, sizeof zB);
            } else {
                nUnknown++;
                snprintf(zB, sizeof zB, "unknown");
            }
            vt__fmt_process(t, zW, sizeof zW);
            size_t nChar = vt__utf8_chars(zW, strlen(zW));
            if (nChar > 24) { /* a long file name: on a line of its own, the columns kept */
                wrap(f, "  ", 4, zW);
                zW[0] = 0;
                nChar = 0;
            }
            fputs("  ", f);
            vt__put_text(f, zW, VT_ESC_LINE); /* a control character is one '?': the width holds */
            fprintf(f, "%*s peak %10s  %d finding%s%s%s\n", (int)(24 - nChar), "", zB, n, n == 1 ? "" : "s",
                    worst >= 0 ? ", worst " : "", worst >= 0 ? vt__sev_name(worst) : "");
        }
        vt__fmt_bytes(sum, zB, sizeof zB);
        if (nUnknown == r->nTrace) fprintf(f, "  sum of per-process device peaks: unknown\n");
        else if (nUnknown)
            fprintf(f, "  sum of per-process device peaks: %s, without the %d process%s whose peak is unknown\n", zB,
                    nUnknown, nUnknown == 1 ? "" : "es");
        else fprintf(f, "  sum of per-process device peaks: %s\n", zB);
        {   /* ranks doing the same work should peak alike: name the one that does not (of those with known peaks) */
            int iMax = -1, iMin = -1;
            for (int i = 0; i < r->nTrace; i++) {
                int64_t peak = vt__fig_trace_peak(&r->aTrace[i].f);
                if (peak < 0) continue;
                if (iMax < 0 || peak > vt__fig_trace_peak(&r->aTrace[iMax].f)) iMax = i;
                if (iMin < 0 || peak < vt__fig_trace_peak(&r->aTrace[iMin].f)) iMin = i;
            }
            int64_t hi = iMax < 0 ? 0 : vt__fig_trace_peak(&r->aTrace[iMax].f);
            int64_t lo = iMin < 0 ? 0 : vt__fig_trace_peak(&r->aTrace[iMin].f);
            if (lo > 0 && hi - lo >= lo / 5 && vt__result_one_job(r)) {
                char zLine[700], zH[32], zL[32];
                vt__fmt_bytes(hi, zH, sizeof zH);
                vt__fmt_bytes(lo, zL, sizeof zL);
                snprintf(zLine, sizeof zLine, "imbalance: %s peaks at %s, %.0f%% above %s (%s); ranks that do the same "
                                              "work should peak alike",
                         vt__fmt_process(&r->aTrace[iMax], zW, sizeof zW), zH, 100.0 * (double)(hi - lo) / (double)lo,
                         r->aTrace[iMin].f.zRank[0] ? "the lowest rank" : "the lowest process", zL);
                wrap(f, "  ", 4, zLine);
            }
        }
    }
    return ferror(f) ? -1 : 0;
}
