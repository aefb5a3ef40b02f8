/* The JSON of `vramtrace info`: one object per trace, stable keys (docs/cli.md). */
#include "info.h"

#include <string.h>

#include "util/text.h"
#include "vramtrace/schema.h"


static void json_int(FILE *f, int64_t v)
{
    if (v == VT_INFO_NUL) fputs("null", f);
    else fprintf(f, "%lld", (long long)v);
}

/* "key": value pairs inside an object; bFirst tracks the comma. */
static void json_key(FILE *f, int *pbFirst, const char *zKey)
{
    if (!*pbFirst) fputc(',', f);
    *pbFirst = 0;
    vt__json_str(f, zKey);
    fputc(':', f);
}

static void json_kv_int(FILE *f, int *pbFirst, const char *zKey, int64_t v)
{
    json_key(f, pbFirst, zKey);
    json_int(f, v);
}

static void json_kv_str(FILE *f, int *pbFirst, const char *zKey, const char *zValue)
{
    json_key(f, pbFirst, zKey);
    vt__json_str(f, zValue);
}

/* Meta rows whose key starts with zPrefix, as one JSON object keyed without the prefix. */
static void json_meta_prefix(FILE *f, const struct trace_info *p, const char *zPrefix)
{
    size_t n = strlen(zPrefix);
    int j, b = 1;
    fputc('{', f);
    for (j = 0; j < p->f.nMeta; j++)
        if (!strncmp(p->f.aMeta[j].zKey, zPrefix, n))
            json_kv_str(f, &b, p->f.aMeta[j].zKey + n, p->f.aMeta[j].zValue);
    fputc('}', f);
}

/* Print one trace as a JSON object (stable keys, documented in docs/cli.md). */
void vt__info_json(FILE *f, const struct trace_info *p)
{
    const char *zClosed = vt__info_meta(p, "closed_cleanly");
    char zW[48];
    int64_t wall = p->f.bTimes ? vt__read_wall(&p->f, p->f.t0) : -1;
    long long nCopy = 0, copyBytes = 0, nPageable = 0;
    int i, j, b = 1, c, bCountsUnknown;

    fputc('{', f);
    json_kv_str(f, &b, "path", p->f.zPath);
    json_kv_int(f, &b, "file_bytes", p->fileBytes);
    json_kv_int(f, &b, "schema_version", p->f.version);
    json_key(f, &b, "closed_cleanly");
    fputs(zClosed && !strcmp(zClosed, "1") ? "true" : "false", f);
    json_key(f, &b, "partial");
    if (p->f.partialFrom >= 0) {
        c = 1;
        fputc('{', f);
        json_kv_int(f, &c, "from_ns", p->f.partialFrom);
        json_kv_int(f, &c, "marked_ns", p->f.partialMark >= 0 ? p->f.partialMark : p->f.partialFrom);
        json_kv_str(f, &c, "reason", p->f.zPartialWhy);
        fputc('}', f);
    } else {
        fputs("null", f);
    }
    /* CUPTI lent to the job's profiler: GPU activity unknown in each window, API calls maybe too */
    json_key(f, &b, "cupti_lend");
    fputc('[', f);
    for (i = 0; i < p->f.nLend; i++) {
        const struct vt_lend *w = &p->f.aLend[i];
        c = 1;
        fputs(i ? ",{" : "{", f);
        json_kv_str(f, &c, "client", w->zClient);
        json_kv_int(f, &c, "from_ns", w->from);
        json_kv_int(f, &c, "until_ns", w->until >= 0 ? w->until : VT_INFO_NUL);
        json_kv_int(f, &c, "api_from_ns", w->apiFrom >= 0 ? w->apiFrom : VT_INFO_NUL);
        json_kv_int(f, &c, "api_until_ns", w->apiUntil >= 0 ? w->apiUntil : VT_INFO_NUL);
        json_key(f, &c, "api_held_by");
        if (w->zApiHeldBy[0]) vt__json_str(f, w->zApiHeldBy);
        else fputs("null", f);
        fputc('}', f);
    }
    fputc(']', f);

    json_key(f, &b, "process");
    c = 1;
    fputc('{', f);
    json_kv_int(f, &c, "pid", vt__info_meta_int(p, "pid"));
    json_kv_int(f, &c, "ppid", vt__info_meta_int(p, "ppid"));
    json_kv_int(f, &c, "rank", vt__info_meta_int(p, "rank"));
    json_kv_int(f, &c, "local_rank", vt__info_meta_int(p, "local_rank"));
    json_kv_int(f, &c, "world_size", vt__info_meta_int(p, "world_size"));
    json_kv_str(f, &c, "hostname", vt__info_meta(p, "hostname"));
    json_kv_str(f, &c, "cmdline", vt__info_meta(p, "cmdline"));
    json_kv_str(f, &c, "executable", vt__info_meta(p, "exe") ? vt__info_meta(p, "exe") : vt__info_meta(p, "executable"));
    fputc('}', f);

    json_key(f, &b, "versions");
    c = 1;
    fputc('{', f);
    json_kv_str(f, &c, "tracer", vt__info_meta(p, "tracer_version"));
    json_kv_int(f, &c, "cuda_driver", vt__info_meta_int(p, "cuda_driver_version"));
    json_kv_int(f, &c, "cuda_runtime", vt__info_meta_int(p, "cuda_runtime_version"));
    json_kv_int(f, &c, "cupti", vt__info_meta_int(p, "cupti_version"));
    json_kv_int(f, &c, "schema", p->f.version);
    json_kv_str(f, &c, "cupti_library", vt__info_meta(p, "cupti_library"));
    json_kv_str(f, &c, "cuda_runtime_library", vt__info_meta(p, "cuda_runtime_library"));
    json_kv_str(f, &c, "cupti_layout", vt__info_meta(p, "cupti_layout"));
    json_kv_str(f, &c, "cupti_layout_table", vt__info_meta(p, "cupti_layout_table"));
    json_kv_str(f, &c, "cupti_kinds_reduced", vt__info_meta(p, "cupti_kinds_reduced"));
    json_kv_str(f, &c, "cupti_subscription", vt__info_meta(p, "cupti_subscription"));
    fputc('}', f);

    json_key(f, &b, "writer");
    c = 1;
    fputc('{', f);
    json_kv_int(f, &c, "records_decoded", vt__info_meta_int(p, "records_decoded"));
    json_kv_int(f, &c, "records_unknown", vt__info_meta_int(p, "records_unknown"));
    json_kv_int(f, &c, "rows_written", vt__info_meta_int(p, "rows_written"));
    json_kv_int(f, &c, "commits", vt__info_meta_int(p, "commits"));
    json_kv_int(f, &c, "dropped_queue", vt__info_meta_int(p, "dropped_queue"));
    json_kv_int(f, &c, "dropped_writer", vt__info_meta_int(p, "dropped_writer"));
    json_kv_int(f, &c, "dropped_map", vt__info_meta_int(p, "dropped_map"));
    fputc('}', f);

    json_key(f, &b, "devices");
    fputc('[', f);
    for (j = 0; j < p->nDev; j++) {
        const struct info_dev *d = &p->aDev[j];
        c = 1;
        fputs(j ? ",{" : "{", f);
        json_kv_int(f, &c, "id", d->id);
        json_kv_str(f, &c, "name", d->zName);
        json_kv_str(f, &c, "uuid", d->zUuid);
        json_kv_int(f, &c, "total_bytes", d->total);
        json_kv_int(f, &c, "cc_major", d->ccMajor);
        json_kv_int(f, &c, "cc_minor", d->ccMinor);
        json_kv_int(f, &c, "sm_count", d->sm);
        json_kv_int(f, &c, "pci_bus", d->pciBus);
        json_kv_int(f, &c, "pci_device", d->pciDev);
        json_kv_int(f, &c, "memory_bandwidth_kbps", d->bw);
        fputc('}', f);
    }
    fputc(']', f);

    json_key(f, &b, "time");
    c = 1;
    fputc('{', f);
    json_kv_int(f, &c, "first_ns", p->f.bTimes ? p->f.t0 : VT_INFO_NUL);
    json_kv_int(f, &c, "last_ns", p->f.bTimes ? p->f.t1 : VT_INFO_NUL);
    json_kv_int(f, &c, "duration_ns", p->f.fig.duration >= 0 ? p->f.fig.duration : VT_INFO_NUL);
    json_kv_int(f, &c, "wall_start_ns", wall >= 0 ? wall : VT_INFO_NUL);
    json_kv_str(f, &c, "wall_start", wall < 0 ? NULL : vt__fmt_wall(wall, zW, sizeof zW));
    json_kv_int(f, &c, "tracer_start_ns", vt__info_meta_int(p, "start_ns"));
    json_kv_int(f, &c, "tracer_end_ns", vt__info_meta_int(p, "end_ns"));
    json_kv_int(f, &c, "time_base_ns", vt__info_meta_int(p, "time_base_ns"));
    json_kv_int(f, &c, "unknown_time_events", p->f.nNoTime);
    json_kv_int(f, &c, "origin_ns", p->f.bTimes ? p->f.fig.origin : VT_INFO_NUL); /* every printed time's 0 */
    fputc('}', f);

    json_key(f, &b, "rows");
    c = 1;
    fputc('{', f);
    for (i = 0; i < VT_INFO_NTABLE; i++)
        if (p->aCount[i] >= 0) json_kv_int(f, &c, vt__info_tables[i], p->aCount[i]);
    fputc('}', f);

    json_key(f, &b, "memory");
    c = 1;
    fputc('{', f);
    /* the counts, level and peaks analyze shows (the figure source, read/figures.h) */
    /* an import holding no allocation: its counts are unknown (null), never 0 */
    bCountsUnknown = vt__fig_counts_unknown(&p->f) != NULL;
    json_kv_int(f, &c, "allocations", bCountsUnknown ? VT_INFO_NUL : p->f.fig.lc.nAlloc);
    json_kv_int(f, &c, "allocated_bytes", bCountsUnknown ? VT_INFO_NUL : p->f.fig.lc.allocBytes);
    json_kv_int(f, &c, "frees", bCountsUnknown ? VT_INFO_NUL : p->f.fig.lc.nFree);
    json_kv_int(f, &c, "vmm_maps", p->f.aMemOp[VT_MEMOP_VMM_MAP]);
    json_key(f, &c, "allocations_by_kind");
    fputc('[', f);
    for (i = 0, j = 0; i < VT_KIND_SLOTS; i++) {
        const struct vt_kindcount *k = &p->f.aAllocKind[i];
        int d = 1;
        if (k->n == 0) continue;
        fputs(j++ ? ",{" : "{", f);
        json_kv_str(f, &d, "mem_kind", i < VT_KIND_SLOTS - 1 ? vt__or(vt_mem_kind_name(i), "other") : "other");
        json_kv_int(f, &d, "count", k->n);
        json_kv_int(f, &d, "bytes", k->bytes);
        fputc('}', f);
    }
    fputs("]", f);
    /* each device's headline peak (figures.h: what every command's headline prints) and its full peaks */
    json_key(f, &c, "peak_live_device");
    fputc('[', f);
    for (i = 0, j = 0; i < p->f.fig.nDev; i++) {
        const struct vt_figdev *fd = &p->f.fig.aDev[i];
        int d = 1;
        if (fd->acct < 0) continue;
        fputs(j++ ? ",{" : "{", f);
        json_kv_int(f, &d, "device", fd->acct);
        json_kv_int(f, &d, "bytes", vt__fig_headline(fd) >= 0 ? vt__fig_headline(fd) : VT_INFO_NUL);
        json_kv_int(f, &d, "ts", vt__fig_headline(fd) == fd->reserved && fd->reservedTs >= 0 ? fd->reservedTs
                                 : vt__fig_headline(fd) == fd->allocated && fd->allocatedTs >= 0 ? fd->allocatedTs
                                                                                                 : VT_INFO_NUL);
        fputc('}', f);
    }
    fputc(']', f);

    json_kv_int(f, &c, "vmm_creations", p->f.aMemOp[VT_MEMOP_VMM_CREATE]);
    json_kv_int(f, &c, "tensor_blocks", p->f.aT[VT_T_TENSOR].nRow);
    json_kv_str(f, &c, "level", vt__level_key(p->f.fig.level));
    json_kv_int(f, &c, "live_at_end", bCountsUnknown ? VT_INFO_NUL : p->f.fig.lc.nLiveEnd);
    json_kv_int(f, &c, "live_at_end_bytes", bCountsUnknown ? VT_INFO_NUL : p->f.fig.lc.liveEndBytes);
    json_kv_int(f, &c, "tensor_allocations", bCountsUnknown ? VT_INFO_NUL : p->f.fig.lc.nTensorAlloc);
    json_key(f, &c, "peaks");
    vt__fig_json(f, &p->f);
    fputc('}', f);

    json_key(f, &b, "copies");
    c = 1;
    fputc('{', f);
    for (i = 0; i < VT_KIND_SLOTS; i++) {
        nCopy += p->f.aCopyKind[i].n;
        copyBytes += p->f.aCopyKind[i].bytes;
        nPageable += p->f.aCopyKind[i].pageable;
    }
    json_kv_int(f, &c, "count", nCopy);
    json_kv_int(f, &c, "bytes", copyBytes);
    json_kv_int(f, &c, "pageable", nPageable);
    json_key(f, &c, "by_kind");
    fputc('[', f);
    for (i = 0, j = 0; i < VT_KIND_SLOTS; i++) {
        const struct vt_kindcount *k = &p->f.aCopyKind[i];
        int d = 1;
        if (k->n == 0) continue;
        fputs(j++ ? ",{" : "{", f);
        json_kv_str(f, &d, "copy_kind", i < VT_KIND_SLOTS - 1 ? vt__or(vt_copy_kind_name(i), "other") : "other");
        json_kv_int(f, &d, "count", k->n);
        json_kv_int(f, &d, "bytes", k->bytes);
        json_kv_int(f, &d, "pageable", k->pageable);
        fputc('}', f);
    }
    fputs("]}", f);
    {
        int64_t nSum, nKernel = vt__info_kernels(p, &nSum);
        json_kv_int(f, &b, "kernels", nKernel);
        json_kv_int(f, &b, "kernels_summarized", nSum);
    }

    json_key(f, &b, "ooms");
    fputc('[', f);
    for (j = 0; j < p->nOom; j++) {
        const struct info_oom *o = &p->aOom[j];
        c = 1;
        fputs(j ? ",{" : "{", f);
        json_kv_int(f, &c, "ts", o->ts);
        json_kv_str(f, &c, "api", vt__or(vt_api_name(o->api), "unknown API"));
        json_kv_int(f, &c, "device", o->device);
        json_kv_int(f, &c, "bytes", o->bytes);
        json_kv_int(f, &c, "status", o->status);
        json_kv_int(f, &c, "free_bytes", o->freeBytes);
        json_kv_int(f, &c, "total_bytes", o->totalBytes);
        fputc('}', f);
    }
    fputc(']', f);

    json_key(f, &b, "dropped");
    c = 1;
    fputc('{', f);
    json_kv_int(f, &c, "total", p->nDropTotal);
    json_kv_int(f, &c, "write_failed", p->f.nWriteFailed);
    json_kv_int(f, &c, "omitted", p->nOmitted);
    json_key(f, &c, "by_source");
    fputc('[', f);
    for (j = 0; j < p->nDrop; j++) {
        int d = 1;
        fputs(j ? ",{" : "{", f);
        json_kv_str(f, &d, "source", vt__or(vt_drop_source_name(p->aDrop[j].source), "other"));
        json_kv_str(f, &d, "what", p->aDrop[j].zWhat);
        json_kv_int(f, &d, "count", p->aDrop[j].count);
        fputc('}', f);
    }
    fputs("]}", f);

    json_key(f, &b, "overhead");
    fputc('[', f);
    for (j = 0; j < p->nOvh; j++) {
        c = 1;
        fputs(j ? ",{" : "{", f);
        json_kv_str(f, &c, "source", p->aOvh[j].zSource);
        json_kv_str(f, &c, "kind", p->aOvh[j].zKind);
        json_kv_int(f, &c, "rows", p->aOvh[j].rows);
        json_kv_int(f, &c, "events", p->aOvh[j].events);
        json_kv_int(f, &c, "total_ns", p->aOvh[j].ns);
        fputc('}', f);
    }
    fputc(']', f);

    json_key(f, &b, "notes");
    fputc('[', f);
    for (j = 0; j < p->f.nNote; j++) {
        if (j) fputc(',', f);
        vt__json_str(f, p->f.azNote[j]);
    }
    fputc(']', f);

    json_key(f, &b, "config");
    json_meta_prefix(f, p, "config.");
    json_key(f, &b, "environment");
    json_meta_prefix(f, p, "env.");
    json_key(f, &b, "meta");
    json_meta_prefix(f, p, "");
    fputc('}', f);
}

