/* The text of `vramtrace info`: the full report of a trace, and the summary `record` prints. */
#include "info.h"

#include <stdlib.h>
#include <string.h>

#include "util/text.h"
#include "vramtrace/schema.h"

/* The executable from meta ("exe", or "executable" in older traces), NULL when absent. */
static const char *exe_of(const struct trace_info *p)
{
    const char *z = vt__info_meta(p, "exe");
    return z ? z : vt__info_meta(p, "executable");
}

/* The name of kind slot j (the last slot gathers every kind past the list): zName, or "other". */
static const char *kind_name(int j, const char *zName)
{
    return j < VT_KIND_SLOTS - 1 && zName ? zName : "other";
}

/* Copies in all, their bytes, and those from or to pageable memory. */
static void copies_total(const struct trace_info *p, long long *pn, long long *pBytes, long long *pPageable)
{
    *pn = *pBytes = *pPageable = 0;
    for (int j = 0; j < VT_KIND_SLOTS; j++) {
        *pn += p->f.aCopyKind[j].n;
        *pBytes += p->f.aCopyKind[j].bytes;
        *pPageable += p->f.aCopyKind[j].pageable;
    }
}


/*
 * "pid 42 (parent 1), rank 0 of 2 (local 0), host h" from the meta rows, into z; a trace with
 * no pid (an imported snapshot) is named by its file (vt__read_process_name).
 */
static void fmt_process(const struct trace_info *p, char *z, size_t n)
{
    const char *zPid = vt__info_meta(p, "pid"), *zPpid = vt__info_meta(p, "ppid");
    const char *zRank = vt__info_meta(p, "rank"), *zWorld = vt__info_meta(p, "world_size");
    const char *zLocal = vt__info_meta(p, "local_rank"), *zHost = vt__info_meta(p, "hostname");
    size_t len = 0;
    z[0] = 0;
#define APPEND(...) \
    if (len < n) len += (size_t)snprintf(z + len, n - len, __VA_ARGS__)
    if (zPid) {
        APPEND("pid %s", zPid);
    } else {
        vt__read_process_name(&p->f, z, n); /* with ", rank R" when it has one */
        len = strlen(z);
    }
    if (zPpid) APPEND(" (parent %s)", zPpid);
    if (zRank) {
        if (zPid) {
            APPEND(", rank %s", zRank);
        }
        if (zWorld) APPEND(" of %s", zWorld);
        if (zLocal) APPEND(" (local %s)", zLocal);
    }
    if (zHost) APPEND(", host %s", zHost);
#undef APPEND
}

static void print_devices(FILE *f, const struct trace_info *p, const char *zLabel)
{
    char zB[32];
    int i;
    if (p->nDev == 0) fprintf(f, "%-11s none recorded\n", zLabel);
    for (i = 0; i < p->nDev; i++) {
        const struct info_dev *d = &p->aDev[i];
        fprintf(f, "%-11s %lld  %s", i == 0 ? zLabel : "", d->id, d->zName ? d->zName : "(unnamed)");
        if (d->total != VT_INFO_NUL) fprintf(f, ", %s", vt__fmt_bytes(d->total, zB, sizeof zB));
        if (d->ccMajor != VT_INFO_NUL && d->ccMinor != VT_INFO_NUL)
            fprintf(f, ", compute %lld.%lld", d->ccMajor, d->ccMinor);
        if (d->sm != VT_INFO_NUL) fprintf(f, ", %lld SMs", d->sm);
        if (d->pciBus != VT_INFO_NUL && d->pciDev != VT_INFO_NUL)
            fprintf(f, ", PCI %02llx:%02llx", d->pciBus, d->pciDev);
        if (d->zUuid && *d->zUuid) fprintf(f, ", %s", d->zUuid);
        fputc('\n', f);
    }
}

/* "duration" line: first to last event (the one duration, figures.h) and the wall-clock start. */
static void print_duration(FILE *f, const struct trace_info *p, const char *zIndent)
{
    char zD[32], zW[48];
    int64_t wall = p->f.bTimes ? vt__read_wall(&p->f, p->f.t0) : -1;
    if (p->f.fig.duration < 0) {
        /* no event: when tracing began all the same (the tracer's start_ns on the wall clock) */
        wall = vt__read_wall(&p->f, vt__info_meta_int(p, "start_ns"));
        fprintf(f, "%s%-11s unknown (no event with a known time)", zIndent, "duration");
        if (wall >= 0) fprintf(f, "; tracing started %s", vt__fmt_wall(wall, zW, sizeof zW));
        fputc('\n', f);
        return;
    }
    fprintf(f, "%s%-11s %s (first to last event)", zIndent, "duration", vt__fmt_ns(p->f.fig.duration, zD, sizeof zD));
    if (wall >= 0) fprintf(f, ", started %s", vt__fmt_wall(wall, zW, sizeof zW));
    fputc('\n', f);
}

/*
 * "memory" line: allocations, frees and the level, then each account's peaks (figures.h: the counts,
 * level and peaks analyze shows).
 */
static void print_memory(FILE *f, const struct trace_info *p, const char *zIndent)
{
    const struct vt_lifecounts *lc = &p->f.fig.lc;
    char zB[32], zP[600];
    long long nMap = p->f.aMemOp[VT_MEMOP_VMM_MAP], nCreate = p->f.aMemOp[VT_MEMOP_VMM_CREATE];
    if (vt__fig_counts_unknown(&p->f))
        fprintf(f, "%s%-11s %s", zIndent, "memory", vt__fig_counts_unknown(&p->f));
    else
        fprintf(f, "%s%-11s %lld allocation%s (%s), %lld free%s", zIndent, "memory", (long long)lc->nAlloc,
                lc->nAlloc == 1 ? "" : "s", vt__fmt_bytes(lc->allocBytes, zB, sizeof zB), (long long)lc->nFree,
                lc->nFree == 1 ? "" : "s");
    if (nCreate) fprintf(f, ", %lld VMM creation%s", nCreate, nCreate == 1 ? "" : "s");
    if (nMap) fprintf(f, ", %lld VMM map%s", nMap, nMap == 1 ? "" : "s");
    fprintf(f, "; level: %s\n", vt__level_name(p->f.fig.level));
    if (vt__fig_blocks_text(&p->f, zP, sizeof zP)) fprintf(f, "%s%-11s %s\n", zIndent, "", zP);
    for (int i = 0; i < p->f.fig.nDev; i++) {
        const struct vt_figdev *d = &p->f.fig.aDev[i];
        if (d->acct >= 0) fprintf(f, "%s%-11s device %d: peak %s\n", zIndent, "", d->acct, vt__fig_peak_text(&p->f, d, zP, sizeof zP));
        else
            fprintf(f, "%s%-11s %s: peak %s\n", zIndent, "", d->acct == VT_ACCT_PINNED ? "pinned host memory" : "managed memory",
                    vt__fig_peak_text(&p->f, d, zP, sizeof zP));
    }
}

/* The `dropped` rows of the trace that are (bOmitted 1) or are not (0) omitted as asked, one line each. */
static void print_drop_rows(FILE *f, const struct trace_info *p, const char *zIndent, int bOmitted)
{
    for (int i = 0; i < p->nDrop; i++)
        if ((p->aDrop[i].cls == VT_DROPCLASS_OMITTED) == bOmitted)
            fprintf(f, "%s%-11s %-7s %-28s %lld\n", zIndent, "", vt__or(vt_drop_source_name(p->aDrop[i].source), "other"),
                    p->aDrop[i].zWhat && *p->aDrop[i].zWhat ? p->aDrop[i].zWhat : "-",
                    (long long)(p->aDrop[i].count == VT_INFO_NUL ? 0 : p->aDrop[i].count));
}

/*
 * "dropped": records lost (none, or how many, each `dropped` row with bDetail); then "omitted" when the
 * size bound left records out as asked (record --max-size), which are not lost.
 */
static void print_dropped(FILE *f, const struct trace_info *p, const char *zIndent, int bDetail)
{
    if (p->nDropTotal == 0) {
        fprintf(f, "%s%-11s none\n", zIndent, "dropped");
    } else {
        fprintf(f, "%s%-11s WARNING: %lld record%s lost; counts, peaks and findings are incomplete\n", zIndent,
                "dropped", (long long)p->nDropTotal, p->nDropTotal == 1 ? "" : "s");
        if (bDetail) print_drop_rows(f, p, zIndent, 0);
    }
    if (p->nOmitted > 0) {
        fprintf(f, "%s%-11s %lld record%s left out by the size bound, as asked (--max-size): not lost\n", zIndent,
                "omitted", (long long)p->nOmitted, p->nOmitted == 1 ? "" : "s");
        if (bDetail) print_drop_rows(f, p, zIndent, 1);
    }
}

/* "; WARNING: ..." for a trace closed by its exit handler that lost rows to failed writes, else "". */
static const char *write_failed_text(const struct trace_info *p, char *z, size_t n)
{
    if (p->f.nWriteFailed <= 0) return "";
    snprintf(z, n, "WARNING: closed, but incomplete: %lld row%s could not be written (a full disk, an I/O error or "
             "the file-size limit)", (long long)p->f.nWriteFailed, p->f.nWriteFailed == 1 ? "" : "s");
    return z;
}

/*
 * What recorded the trace (libcupti and CUDA runtime files, record layouts used, the CUPTI subscription:
 * one of several subscribers or the only one), when the tracer said.
 */
static void recorded_by(FILE *f, const struct trace_info *p)
{
    const char *zLib = vt__info_meta(p, "cupti_library"), *zRt = vt__info_meta(p, "cuda_runtime_library");
    const char *zLayout = vt__info_meta(p, "cupti_layout"), *zTable = vt__info_meta(p, "cupti_layout_table");
    const char *zSub = vt__info_meta(p, "cupti_subscription");
    if (zLib) fprintf(f, "%-11s %s\n", "libcupti", zLib);
    if (zRt) fprintf(f, "%-11s %s\n", "libcudart", zRt);
    if (zLayout)
        fprintf(f, "%-11s %s%s%s (layout table %s)\n", "layouts", strncmp(zLayout, "unknown", 7) ? "CUPTI " : "",
                zLayout, strncmp(zLayout, "unknown", 7) ? " records" : "", zTable ? zTable : "?");
    if (zSub) fprintf(f, "%-11s %s\n", "subscriber", zSub);
}

/* Print the full text report of one trace. */
void vt__info_text(FILE *f, const struct trace_info *p)
{
    const char *zTracer = vt__info_meta(p, "tracer_version"), *zDriver = vt__info_meta(p, "cuda_driver_version");
    const char *zRuntime = vt__info_meta(p, "cuda_runtime_version"), *zCupti = vt__info_meta(p, "cupti_version");
    const char *zCmd = vt__info_meta(p, "cmdline"), *zExe = exe_of(p);
    const char *zClosed = vt__info_meta(p, "closed_cleanly");
    const char *zSource = vt__info_meta(p, "source_format"), *zFile = vt__info_meta(p, "source_file");
    char zB[32], zProc[512], zT[32], zW[160];
    long long nCopy, copyBytes, nPageable;
    int i, j, bFirst;

    fprintf(f, "%-11s %s\n", "trace", p->f.zPath);
    fprintf(f, "%-11s %lld bytes (%s), schema version %d\n", "file", (long long)p->fileBytes,
            vt__fmt_bytes(p->fileBytes, zB, sizeof zB), p->f.version);
    fmt_process(p, zProc, sizeof zProc);
    fprintf(f, "%-11s %s\n", "process", zProc);
    if (zCmd) fprintf(f, "%-11s %s\n", "command", zCmd);
    if (zExe) fprintf(f, "%-11s %s\n", "executable", zExe);
    if (zSource && strcmp(zSource, "cupti") != 0 && !zTracer) {
        const char *zImporter = vt__info_meta(p, "importer_version");
        fprintf(f, "%-11s importer %s, schema %d\n", "versions", zImporter ? zImporter : "?", p->f.version);
    } else {
        fprintf(f, "%-11s tracer %s, CUDA driver %s", "versions", zTracer ? zTracer : "?", zDriver ? zDriver : "?");
        if (zRuntime) fprintf(f, ", CUDA runtime %s", zRuntime);
        fprintf(f, ", CUPTI %s, schema %d\n", zCupti ? zCupti : "?", p->f.version);
        recorded_by(f, p);
    }
    /* how long: the duration line alone (first to last event), one duration */
    if (zSource && strcmp(zSource, "cupti") != 0) { /* imported: another tool recorded it, nothing was traced */
        fprintf(f, "%-11s imported from %s file %s\n", "status", zSource, zFile ? zFile : "?");
    } else if (zClosed && !strcmp(zClosed, "1")) {
        fprintf(f, "%-11s %s\n", "status", p->f.nWriteFailed > 0 ? write_failed_text(p, zW, sizeof zW) : "closed cleanly");
    } else {
        fprintf(f, "%-11s WARNING: not closed cleanly (the process was killed, crashed or is still "
                   "running); the last events may be missing\n",
                "status");
    }
    if (vt__info_meta(p, "records_decoded"))
        fprintf(f, "%-11s %s CUPTI records decoded (%s of kinds not stored), %s rows in %s commit%s\n",
                "writer", vt__info_meta(p, "records_decoded"),
                vt__info_meta(p, "records_unknown") ? vt__info_meta(p, "records_unknown") : "?",
                vt__info_meta(p, "rows_written") ? vt__info_meta(p, "rows_written") : "?",
                vt__info_meta(p, "commits") ? vt__info_meta(p, "commits") : "?",
                vt__info_meta_int(p, "commits") == 1 ? "" : "s");
    if (p->f.partialFrom >= 0) fprintf(f, "%-11s WARNING: %s: %s\n", "", vt__read_partial_at(&p->f, zW, sizeof zW), p->f.zPartialWhy);
    print_devices(f, p, "devices");
    print_duration(f, p, "");
    print_memory(f, p, "");
    for (j = 0; j < VT_KIND_SLOTS; j++) {
        const struct vt_kindcount *k = &p->f.aAllocKind[j];
        if (k->n == 0) continue;
        fprintf(f, "%-11s %-14s %lld allocation%s, %s\n", "", kind_name(j, vt_mem_kind_name(j)), (long long)k->n,
                k->n == 1 ? "" : "s", vt__fmt_bytes(k->bytes, zB, sizeof zB));
    }
    copies_total(p, &nCopy, &copyBytes, &nPageable);
    fprintf(f, "%-11s %lld (%s), %lld from or to pageable host memory\n", "copies", nCopy,
            vt__fmt_bytes(copyBytes, zB, sizeof zB), nPageable);
    for (j = 0; j < VT_KIND_SLOTS; j++) {
        const struct vt_kindcount *k = &p->f.aCopyKind[j];
        if (k->n == 0) continue;
        fprintf(f, "%-11s %-14s %lld, %s\n", "", kind_name(j, vt_copy_kind_name(j)), (long long)k->n,
                vt__fmt_bytes(k->bytes, zB, sizeof zB));
    }
    {
        int64_t nSum, nKernel = vt__info_kernels(p, &nSum);
        if (nSum) fprintf(f, "%-11s %lld (%lld of them in kernel_summary rows)\n", "kernels", (long long)nKernel,
                          (long long)nSum);
        else fprintf(f, "%-11s %lld\n", "kernels", (long long)nKernel);
    }
    fprintf(f, "%-11s %lld\n", "OOMs", (long long)vt__info_count(p, "oom_event"));
    for (j = 0; j < p->nOom; j++) {
        const struct info_oom *o = &p->aOom[j];
        char zReq[32], zFree[32], zTot[32];
        fprintf(f, "%-11s +%s %s of %s", "", vt__fig_fmt_at(&p->f, o->ts != VT_INFO_NUL ? o->ts : -1, zT, sizeof zT),
                vt__or(vt_api_name(o->api), "unknown API"),
                o->bytes != VT_INFO_NUL ? vt__fmt_bytes(o->bytes, zReq, sizeof zReq) : "unknown size");
        if (o->device != VT_INFO_NUL) fprintf(f, " on device %lld", (long long)o->device);
        if (o->status != VT_INFO_NUL) fprintf(f, " failed (status %lld)", (long long)o->status);
        else fprintf(f, " failed");
        if (o->freeBytes != VT_INFO_NUL && o->totalBytes != VT_INFO_NUL)
            fprintf(f, ", %s free of %s", vt__fmt_bytes(o->freeBytes, zFree, sizeof zFree),
                    vt__fmt_bytes(o->totalBytes, zTot, sizeof zTot));
        fputc('\n', f);
    }
    print_dropped(f, p, "", 1);
    for (j = 0; j < p->f.nNote; j++) fprintf(f, "%-11s %s\n", j == 0 ? "notes" : "", p->f.azNote[j]);
    if (p->nOvh == 0) fprintf(f, "%-11s none recorded\n", "overhead");
    for (j = 0; j < p->nOvh; j++)
        fprintf(f, "%-11s %-9s %-24s %s in %lld event%s\n", j == 0 ? "overhead" : "",
                p->aOvh[j].zSource ? p->aOvh[j].zSource : "?", p->aOvh[j].zKind ? p->aOvh[j].zKind : "?",
                vt__fmt_ns(p->aOvh[j].ns == VT_INFO_NUL ? 0 : p->aOvh[j].ns, zT, sizeof zT),
                (long long)(p->aOvh[j].events == VT_INFO_NUL ? 0 : p->aOvh[j].events), p->aOvh[j].events == 1 ? "" : "s");
    for (i = 0, bFirst = 1; i < VT_INFO_NTABLE; i++) {
        if (p->aCount[i] < 0) continue;
        fprintf(f, "%-11s %-14s %lld\n", bFirst ? "rows" : "", vt__info_tables[i], (long long)p->aCount[i]);
        bFirst = 0;
    }
    for (j = 0, bFirst = 1; j < p->f.nMeta; j++) {
        if (strncmp(p->f.aMeta[j].zKey, "config.", 7) != 0) continue;
        fprintf(f, "%-11s %s = %s\n", bFirst ? "config" : "", p->f.aMeta[j].zKey + 7, p->f.aMeta[j].zValue);
        bFirst = 0;
    }
    for (j = 0, bFirst = 1; j < p->f.nMeta; j++) {
        if (strncmp(p->f.aMeta[j].zKey, "env.", 4) != 0) continue;
        fprintf(f, "%-11s %s=%s\n", bFirst ? "environment" : "", p->f.aMeta[j].zKey + 4, p->f.aMeta[j].zValue);
        bFirst = 0;
    }
    for (j = 0, bFirst = 1; j < p->f.nMeta; j++) {
        if (vt__info_meta_known(p->f.aMeta[j].zKey)) continue;
        fprintf(f, "%-11s %s = %s\n", bFirst ? "meta" : "", p->f.aMeta[j].zKey, p->f.aMeta[j].zValue);
        bFirst = 0;
    }
}

/*
 * "others" lines: each device's other processes as `record` read them through NVML (meta
 * nvml.device.D.*): before launch and the most while the job ran. Nothing without the readings.
 */
static void print_others(FILE *f, const struct trace_info *p, const char *zIndent)
{
    int bFirst = 1;
    for (int i = 0; i < p->nDev; i++) {
        struct vt_others o;
        char zL[32], zM[32];
        vt__read_others(&p->f, (int)p->aDev[i].id, 0, &o);
        if (o.launchBytes < 0 && o.maxBytes < 0) continue;
        fprintf(f, "%s%-11s device %lld: other processes ", zIndent, bFirst ? "others" : "", (long long)p->aDev[i].id);
        if (o.launchBytes >= 0) fprintf(f, "%s before launch", vt__fmt_bytes(o.launchBytes, zL, sizeof zL));
        if (o.maxBytes >= 0)
            fprintf(f, "%sat most %s while it ran (%d reading%s)", o.launchBytes >= 0 ? ", " : "",
                    vt__fmt_bytes(o.maxBytes, zM, sizeof zM), o.nSample, o.nSample == 1 ? "" : "s");
        else if (o.zNote)
            fprintf(f, ", not read while it ran (meta nvml.device.%lld.others_note says why)", (long long)p->aDev[i].id);
        else
            fputs(", not read while it ran", f);
        fputs(" (NVML, read by record)\n", f);
        bFirst = 0;
    }
}

int vt__info_summary(FILE *f, const char *zPath)
{
    struct trace_info info;
    char zB[32], zProc[512], zSum[48], zW[160];
    const char *zClosed;
    long long nCopy, copyBytes, nPageable, nKernel, nOom;
    int64_t nSum;
    int rc = vt__info_load(&info, zPath, 0);
    if (rc == VT_EXIT_OK) {
        zClosed = vt__info_meta(&info, "closed_cleanly");
        fmt_process(&info, zProc, sizeof zProc);
        fprintf(f, "  %s\n", zPath);
        fprintf(f, "    %-11s %s%s%s\n", "process", zProc, zClosed && !strcmp(zClosed, "1") && !info.f.nWriteFailed ? "" : "; ",
                !zClosed || strcmp(zClosed, "1") ? "WARNING: trace not closed cleanly" : write_failed_text(&info, zW, sizeof zW));
        if (info.nDev == 0) fprintf(f, "    %-11s none recorded\n", "devices");
        for (int i = 0; i < info.nDev; i++)
            fprintf(f, "    %-11s %lld  %s (%s)\n", i ? "" : "devices", (long long)info.aDev[i].id,
                    info.aDev[i].zName ? info.aDev[i].zName : "(unnamed)",
                    vt__fmt_bytes(info.aDev[i].total == VT_INFO_NUL ? 0 : info.aDev[i].total, zB, sizeof zB));
        print_duration(f, &info, "    ");
        print_memory(f, &info, "    ");
        print_others(f, &info, "    ");
        copies_total(&info, &nCopy, &copyBytes, &nPageable);
        nKernel = vt__info_kernels(&info, &nSum);
        nOom = vt__info_count(&info, "oom_event");
        snprintf(zSum, sizeof zSum, " (%lld summarized)", (long long)nSum);
        fprintf(f, "    %-11s %lld cop%s (%s), %lld kernel%s%s, %lld OOM%s\n", "activity", nCopy, nCopy == 1 ? "y" : "ies",
                vt__fmt_bytes(copyBytes, zB, sizeof zB), nKernel, nKernel == 1 ? "" : "s", nSum ? zSum : "", nOom,
                nOom == 1 ? "" : "s");
        print_dropped(f, &info, "    ", 0);
    }
    vt__info_free(&info);
    return rc;
}
