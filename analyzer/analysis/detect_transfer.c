/* Detector: transfer bottlenecks: pageable copies, copies serialized with compute, pinned memory growing. */
#include "analysis.h"

#include <stdint.h>
#include <string.h>

/* Append a transfer finding (title and evidence are taken over); 0 or -1 when out of memory. */
static int add(struct vt_result *r, int iTrace, int sev, int64_t bytes, int64_t count, int64_t a, int64_t b,
               char *zTitle, char *zEvidence, const char *zFix)
{
    struct vt_finding *f = vt__finding_add(r, iTrace, "transfer", sev);
    if (!f) {
        free(zTitle);
        free(zEvidence);
        return -1;
    }
    f->bytes = bytes;
    f->count = count;
    f->firstTs = a;
    f->lastTs = b;
    f->zTitle = zTitle;
    f->zEvidence = zEvidence;
    f->zSite = vt__strdupf("host-device copies");
    f->zFix = vt__strdupf("%s", zFix);
    return f->zTitle && f->zEvidence && f->zSite && f->zFix ? 0 : -1;
}

/* Where a memcpy row m is a host<->device copy whose host side is pageable (four %d: kinds). */
#define PAGEABLE_SQL " ((m.copy_kind = %d AND m.src_kind = %d) OR (m.copy_kind = %d AND m.dst_kind = %d))"

/*
 * The pageable copies ending after a time (%lld) as pc(c, kind, bytes, s, e), and their API calls
 * as pa(c, stack) (the %d: PAGEABLE_SQL's kinds). The calls are found by one scan of api_call
 * probing the copies' correlation ids: a join of the two views on their computed correlation
 * columns has no index to use (the tracer builds none, --no-write adds none) and would read every
 * API call once per copy.
 */
#define PAGEABLE_CALLS_SQL                                                                                           \
    "WITH pc AS MATERIALIZED (SELECT m.correlation AS c, m.copy_kind AS kind, m.bytes AS bytes, m.start AS s,"     \
    " m.\"end\" AS e FROM memcpy m WHERE m.\"end\" > %lld AND" PAGEABLE_SQL "),"                                   \
    " pa AS MATERIALIZED (SELECT a.correlation AS c, a.stack_id AS stack FROM api_call a"                           \
    " WHERE a.correlation IN (SELECT c FROM pc)) "

/* One group of pageable copies ending after start: one call site (stack; bNull: none recorded) and one kind. */
struct pgroup {
    int64_t stack;
    int bNull, kind;
    /* the copies ending after the first kernel: count, bytes, time (each at least 1 ns), first start, last end */
    int64_t n, bytes, ns, first, last;
    int bLast;    /* first and last are known (n > 0) */
    int bStartup; /* its site copied only at start-up (startup_sites): its copies are not counted */
    /* site figures: copies ending after the first kernel (0), or within start-up (1), of a known duration:
     * their time, count and last end */
    int64_t siteNs[2], siteN[2], siteLast[2];
};

/* What start-up left out of the per-step figures (copies from call sites that copied only then), and
 * the pageable copies by call site and kind, read once for every figure below. */
struct startup {
    int64_t limit;          /* a site whose last pageable copy ended by then copied only at start-up */
    int64_t count[2], bytes[2], ns[2]; /* by direction: 0 host to device, 1 device to host */
    int64_t last;           /* when the last of them ended; 0 none */
    /* the first step's input (first_batch): pageable copies ending by the first kernel whose size recurs after
     * it, by direction, counted as the run's, not start-up's; batchFirst their first start (0 none) */
    int64_t batchCount[2], batchBytes[2], batchNs[2], batchFirst;
    struct pgroup *aGroup;  /* ordered by stack (none first), then kind */
    int nGroup;
};

/*
 * Read the pageable copies' groups (struct pgroup) into su: one scan of memcpy and one of api_call,
 * lo the first kernel's start (or the trace's), the trace starting at t0. Returns an SQLite code
 * (SQLITE_NOMEM only is an error; a trace without such columns gives no group).
 */
static int read_groups(struct vt_trace *t, int64_t lo, struct startup *su)
{
    sqlite3_stmt *pStmt = NULL;
    int rc, nAlloc = 0;
    int64_t lo1 = t->f.t0 - 1; /* start-up's site: copies from the trace's start */
    char *zSql = vt__strdupf(
        PAGEABLE_CALLS_SQL "SELECT pa.stack, pc.kind, sum(pc.e > %lld), sum(CASE WHEN pc.e > %lld THEN pc.bytes END),"
        " sum(CASE WHEN pc.e > %lld THEN max(pc.e - pc.s, 1) END), max(CASE WHEN pc.e > %lld THEN pc.e END),"
        " sum(CASE WHEN pc.e > %lld AND pc.e >= pc.s THEN pc.e - pc.s END), sum(pc.e > %lld AND pc.e >= pc.s),"
        " max(CASE WHEN pc.e > %lld AND pc.e >= pc.s THEN pc.e END),"
        " sum(CASE WHEN pc.e > %lld AND pc.e >= pc.s AND pc.e <= %lld THEN pc.e - pc.s END),"
        " sum(pc.e > %lld AND pc.e >= pc.s AND pc.e <= %lld),"
        " max(CASE WHEN pc.e > %lld AND pc.e >= pc.s AND pc.e <= %lld THEN pc.e END),"
        " min(CASE WHEN pc.e > %lld THEN pc.s END)"
        " FROM pc JOIN pa ON pa.c = pc.c GROUP BY pa.stack, pc.kind ORDER BY pa.stack, pc.kind",
        (long long)(lo < lo1 ? lo : lo1), VT_COPY_HTOD, VT_MEMKIND_PAGEABLE, VT_COPY_DTOH, VT_MEMKIND_PAGEABLE,
        (long long)lo, (long long)lo, (long long)lo, (long long)lo, (long long)lo, (long long)lo, (long long)lo,
        (long long)lo1, (long long)su->limit, (long long)lo1, (long long)su->limit, (long long)lo1,
        (long long)su->limit, (long long)lo);
    su->aGroup = NULL;
    su->nGroup = 0;
    if (!zSql) return SQLITE_NOMEM;
    rc = sqlite3_prepare_v2(t->f.db, zSql, -1, &pStmt, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
        struct pgroup *g;
        rc = SQLITE_OK;
        if (su->nGroup == nAlloc) {
            int n = nAlloc ? 2 * nAlloc : 16;
            struct pgroup *a = realloc(su->aGroup, (size_t)n * sizeof *a);
            if (!a) {
                rc = SQLITE_NOMEM;
                break;
            }
            su->aGroup = a;
            nAlloc = n;
        }
        g = &su->aGroup[su->nGroup++];
        g->bNull = sqlite3_column_type(pStmt, 0) == SQLITE_NULL;
        g->stack = sqlite3_column_int64(pStmt, 0);
        g->kind = sqlite3_column_int(pStmt, 1);
        g->n = sqlite3_column_int64(pStmt, 2);
        g->bytes = sqlite3_column_int64(pStmt, 3);
        g->ns = sqlite3_column_int64(pStmt, 4);
        g->bLast = sqlite3_column_type(pStmt, 5) != SQLITE_NULL;
        g->last = sqlite3_column_int64(pStmt, 5);
        for (int k = 0; k < 2; k++) {
            g->siteNs[k] = sqlite3_column_int64(pStmt, 6 + 3 * k);
            g->siteN[k] = sqlite3_column_int64(pStmt, 7 + 3 * k);
            g->siteLast[k] = sqlite3_column_int64(pStmt, 8 + 3 * k);
        }
        g->first = sqlite3_column_int64(pStmt, 12);
        g->bStartup = 0;
    }
    sqlite3_finalize(pStmt);
    free(zSql);
    return rc == SQLITE_NOMEM ? rc : SQLITE_OK;
}

/* The index after the groups of su that share group i's call site (its kinds: consecutive, as read). */
static int site_end(const struct startup *su, int i)
{
    int j = i;
    while (j < su->nGroup && su->aGroup[j].bNull == su->aGroup[i].bNull && su->aGroup[j].stack == su->aGroup[i].stack)
        j++;
    return j;
}

/*
 * Start-up copies after the first kernel (which the pass cannot tell): the pageable copies
 * ending after lo (the first kernel's start) from call sites whose last pageable copy ended by
 * su->limit (the first iteration's start; without iterations, the first quarter of the run
 * after lo): weights loaded after initialization kernels. Into su by direction, with su's
 * groups (read_groups); an SQLite code (SQLITE_NOMEM only is an error; a trace without such
 * columns gives zeros). A site without a recorded stack counts as stack -1.
 */
static int startup_sites(struct vt_trace *t, int64_t lo, struct startup *su)
{
    int64_t lastNone = INT64_MIN; /* the last end of the sites counted as -1 (none recorded, or -1) */
    int rc = read_groups(t, lo, su);
    memset(su->count, 0, sizeof su->count);
    memset(su->bytes, 0, sizeof su->bytes);
    memset(su->ns, 0, sizeof su->ns);
    su->last = 0;
    if (rc != SQLITE_OK) return rc;
    for (int i = 0; i < su->nGroup; i++)
        if ((su->aGroup[i].bNull || su->aGroup[i].stack == -1) && su->aGroup[i].bLast && su->aGroup[i].last > lastNone)
            lastNone = su->aGroup[i].last;
    for (int i = 0, j; i < su->nGroup; i = j) { /* groups i..j-1: one site, its kinds */
        struct pgroup *g = &su->aGroup[i];
        int64_t last = INT64_MIN;
        int bNone = g->bNull || g->stack == -1;
        j = site_end(su, i);
        for (int k = i; k < j; k++)
            if (su->aGroup[k].bLast && su->aGroup[k].last > last) last = su->aGroup[k].last;
        if (bNone) last = lastNone;
        if (last == INT64_MIN || last > su->limit) continue; /* no copy after lo, or copying after start-up */
        for (int k = i; k < j; k++) {
            struct pgroup *h = &su->aGroup[k];
            int dir = h->kind == VT_COPY_HTOD ? 0 : 1;
            if (!h->bLast) continue;
            h->bStartup = 1;
            su->count[dir] += h->n;
            su->bytes[dir] += h->bytes;
            su->ns[dir] += h->ns;
            if (h->last > su->last) su->last = h->last;
        }
    }
    return SQLITE_OK;
}

/*
 * The first step's input among the copies before the first kernel (lo its start): of each direction
 * and size that at least nNeed pageable copies ending after lo have (a batch copied every step;
 * weights are moved once), the last pageable copies ending by lo, one step's worth (nIter
 * iterations: the copies after lo per iteration, at least one; one without iterations), into su's
 * batch figures by direction. Returns an SQLite code (SQLITE_NOMEM only is an error; a trace
 * without such columns gives zeros).
 */
static int first_batch(struct vt_trace *t, int64_t lo, int64_t nNeed, int nIter, struct startup *su)
{
    sqlite3_stmt *pStmt = NULL;
    int rc;
    char *zSql = vt__strdupf(
        "WITH pre AS (SELECT m.copy_kind AS k, m.bytes AS b, m.start AS s, m.\"end\" AS e, row_number() OVER"
        " (PARTITION BY m.copy_kind, m.bytes ORDER BY m.\"end\" DESC) AS rn FROM memcpy m WHERE m.\"end\" <= %lld"
        " AND" PAGEABLE_SQL "), rec AS (SELECT m.copy_kind AS k, m.bytes AS b, count(*) AS n FROM memcpy m"
        " WHERE m.\"end\" > %lld AND" PAGEABLE_SQL " GROUP BY m.copy_kind, m.bytes HAVING count(*) >= %lld)"
        " SELECT pre.k, count(*), sum(pre.b), sum(max(pre.e - pre.s, 1)), min(pre.s) FROM pre JOIN rec"
        " ON rec.k = pre.k AND rec.b = pre.b WHERE pre.rn <= max(1, rec.n / %d) GROUP BY pre.k",
        (long long)lo, VT_COPY_HTOD, VT_MEMKIND_PAGEABLE, VT_COPY_DTOH, VT_MEMKIND_PAGEABLE, (long long)lo,
        VT_COPY_HTOD, VT_MEMKIND_PAGEABLE, VT_COPY_DTOH, VT_MEMKIND_PAGEABLE, (long long)nNeed, nIter > 0 ? nIter : 1 << 30);
    memset(su->batchCount, 0, sizeof su->batchCount);
    memset(su->batchBytes, 0, sizeof su->batchBytes);
    memset(su->batchNs, 0, sizeof su->batchNs);
    su->batchFirst = 0;
    if (!zSql) return SQLITE_NOMEM;
    rc = sqlite3_prepare_v2(t->f.db, zSql, -1, &pStmt, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
        int dir = sqlite3_column_int(pStmt, 0) == VT_COPY_HTOD ? 0 : 1;
        int64_t first = sqlite3_column_int64(pStmt, 4);
        rc = SQLITE_OK;
        su->batchCount[dir] = sqlite3_column_int64(pStmt, 1);
        su->batchBytes[dir] = sqlite3_column_int64(pStmt, 2);
        su->batchNs[dir] = sqlite3_column_int64(pStmt, 3);
        if (su->batchFirst == 0 || first < su->batchFirst) su->batchFirst = first;
    }
    sqlite3_finalize(pStmt);
    free(zSql);
    return rc == SQLITE_NOMEM ? rc : SQLITE_OK;
}

/*
 * The call site whose pageable host<->device copies took the most time, among the sites whose
 * last such copy ended after lastAfter: the copies ending after the first kernel (bStartup 0),
 * or after the trace's start and by su->limit (bStartup 1). Its stack id in *pStack and that
 * time and count in *pNs, *pCount (*pStack -1 when no such copy's API call has a stack); ties
 * go to the lower stack id.
 */
static void pageable_site(const struct startup *su, int bStartup, int64_t lastAfter, int64_t *pStack, int64_t *pNs,
                          int64_t *pCount)
{
    int bFound = 0;
    *pStack = -1;
    *pNs = *pCount = 0;
    for (int i = 0, j; i < su->nGroup; i = j) {
        const struct pgroup *g = &su->aGroup[i];
        int64_t ns = 0, n = 0, last = INT64_MIN;
        j = site_end(su, i);
        for (int k = i; k < j; k++) {
            const struct pgroup *h = &su->aGroup[k];
            if (h->siteN[bStartup] <= 0) continue;
            ns += h->siteNs[bStartup];
            n += h->siteN[bStartup];
            if (h->siteLast[bStartup] > last) last = h->siteLast[bStartup];
        }
        if (g->bNull || n == 0 || last <= lastAfter) continue;
        if (!bFound || ns > *pNs) { /* ordered by stack: the first of equal times stays */
            bFound = 1;
            *pStack = g->stack;
            *pNs = ns;
            *pCount = n;
        }
    }
}

/*
 * Point pageable-copy finding f at the call site that issued most of the copy time of its copies
 * (pageable_site's bStartup and lastAfter; the site stays "host-device copies" when no copy's
 * call site was recorded). 0, or -1 when out of memory.
 */
static int set_pageable_site(struct vt_trace *t, const struct startup *su, int bStartup, int64_t lastAfter,
                             struct vt_finding *f)
{
    int64_t stack, ns, count;
    char *zSite = NULL, *zEv = NULL, zT[32];
    int rc = SQLITE_OK;
    pageable_site(su, bStartup, lastAfter, &stack, &ns, &count);
    if (stack < 0) return 0;
    zSite = vt__stack_describe(t->f.db, stack, &rc);
    if (!zSite) return rc == SQLITE_NOMEM ? -1 : 0;
    vt__fmt_ns(ns, zT, sizeof zT);
    zEv = vt__strdupf("%s Most of that time (%lld %s, %s) was issued from %s.", f->zEvidence, (long long)count,
                      count == 1 ? "copy" : "copies", zT, zSite);
    if (!zEv) {
        free(zSite);
        return -1;
    }
    free(f->zSite);
    free(f->zEvidence);
    f->zSite = zSite;
    f->zEvidence = zEv;
    f->stackId = stack;
    return 0;
}

/*
 * Point pinned-growth finding f at the call site holding the most pinned memory at its peak
 * (account iDev; unchanged when no stack was recorded for it). 0, or -1 when out of memory.
 */
static int set_pinned_site(struct vt_trace *t, int iDev, struct vt_finding *f)
{
    const struct vt_group *g;
    char *zSite, *zEv, zB[32];
    if (iDev < 0 || t->tl.aDev[iDev].nGroup == 0) return 0;
    g = &t->tl.aDev[iDev].aGroup[0];
    if (g->site < 0 || t->sites.a[g->site].stackId < 0) return 0;
    vt__fmt_bytes(g->bytes, zB, sizeof zB);
    zSite = vt__strdupf("%s", t->sites.a[g->site].zSite);
    zEv = vt__strdupf("%s At the peak %lld pinned %s (%s) %s live from %s.", f->zEvidence, (long long)g->count,
                      g->count == 1 ? "allocation" : "allocations", zB, g->count == 1 ? "was" : "were",
                      t->sites.a[g->site].zSite);
    if (!zSite || !zEv) {
        free(zSite);
        free(zEv);
        return -1;
    }
    free(f->zSite);
    free(f->zEvidence);
    f->zSite = zSite;
    f->zEvidence = zEv;
    f->stackId = t->sites.a[g->site].stackId;
    return 0;
}

/*
 * The host link of common GPUs, by a part of the device's name (the first that matches: GH200
 * before H200), and what copies from pinned memory reach over it in one direction (about 80 % of
 * the link's rate, in GB/s, that is bytes per ns): the yardstick for pageable copies when the
 * trace holds no pinned copy to compare with. docs/analysis.md lists it.
 */
static const struct link {
    const char *zPart, *zLink;
    double gbps;
} aLink[] = {
    {"GH200", "NVLink-C2C", 350}, {"GB200", "NVLink-C2C", 350},   {"H200", "PCIe Gen5 x16", 50},
    {"H100", "PCIe Gen5 x16", 50}, {"H800", "PCIe Gen5 x16", 50}, {"B200", "PCIe Gen5 x16", 50},
    {"B100", "PCIe Gen5 x16", 50}, {"RTX 50", "PCIe Gen5 x16", 50}, {"A100", "PCIe Gen4 x16", 25},
    {"A800", "PCIe Gen4 x16", 25}, {"A10", "PCIe Gen4 x16", 25},  {"A30", "PCIe Gen4 x16", 25},
    {"A40", "PCIe Gen4 x16", 25},  {"L40", "PCIe Gen4 x16", 25},  {"L4", "PCIe Gen4 x16", 25},
    {"RTX 40", "PCIe Gen4 x16", 25}, {"RTX 30", "PCIe Gen4 x16", 25}, {"RTX A", "PCIe Gen4 x16", 25},
    {"V100", "PCIe Gen3 x16", 12}, {"P100", "PCIe Gen3 x16", 12}, {"T4", "PCIe Gen3 x16", 12},
    {"RTX 20", "PCIe Gen3 x16", 12}, {"GTX", "PCIe Gen3 x16", 12}, {"TITAN", "PCIe Gen3 x16", 12},
};
static const struct link linkUnknown = {"", "PCIe Gen3 x16 (device not in the table: the slowest link assumed)", 12};

/* The host link of t's main device (the one whose memory peaked highest, else the first one known). */
static const struct link *host_link(const struct vt_trace *t, const char **pzDev)
{
    const char *zName = NULL;
    int64_t peak = -1;
    for (int d = 0; d < t->tl.nDev; d++)
        if (t->tl.aDev[d].id >= 0 && t->tl.aDev[d].peak > peak) peak = t->tl.aDev[d].peak, zName = t->tl.aDev[d].zName;
    if ((!zName || !zName[0]) && t->f.nDev > 0) zName = t->f.aDev[0].zName;
    *pzDev = zName && zName[0] ? zName : "unknown device";
    for (size_t i = 0; zName && i < sizeof aLink / sizeof aLink[0]; i++)
        if (strstr(zName, aLink[i].zPart)) return &aLink[i];
    return &linkUnknown;
}

/*
 * Severity of pageable copies by the share pct (%) of the run after start-up that pinning saves:
 * info under 2 %, low from 2 %, medium from 5 %, high from 15 %.
 */
static int pageable_sev(double pct)
{
    return pct >= 15 ? VT_SEV_HIGH : pct >= 5 ? VT_SEV_MEDIUM : pct >= 2 ? VT_SEV_LOW : VT_SEV_INFO;
}

/* Pageable copies by direction (0 host to device, 1 device to host): what a finding describes. */
struct dirs {
    int64_t count[2], bytes[2], ns[2];
};

/*
 * Per direction of d: "Host to device: N pageable copies, B in T at X GB/s; the fastest ...",
 * into z[dir] (empty for a direction without copies; the fastest copy of the trace in that
 * direction, of 64 KiB or more, only where there is one).
 */
static void fmt_directions(const struct vt_trace *t, const struct dirs *d, char z[2][400])
{
    char zB[32], zT[32], zF[120];
    for (int dir = 0; dir < 2; dir++) {
        double bw = (double)d->bytes[dir] / (double)(d->ns[dir] > 0 ? d->ns[dir] : 1);
        z[dir][0] = 0;
        if (d->count[dir] == 0) continue;
        vt__fmt_bytes(d->bytes[dir], zB, sizeof zB);
        vt__fmt_ns(d->ns[dir], zT, sizeof zT);
        zF[0] = 0;
        if (t->xf.x[dir].bestBw > 0)
            snprintf(zF, sizeof zF, "; the fastest %s copy of 64 KiB or more reached %.2f GB/s",
                     dir == 0 ? "host-to-device" : "device-to-host", t->xf.x[dir].bestBw);
        snprintf(z[dir], sizeof z[dir], "%s%s: %lld pageable %s, %s in %s at %.2f GB/s%s.",
                 dir == 1 && d->count[0] ? " " : "", dir == 0 ? "Host to device" : "Device to host",
                 (long long)d->count[dir], d->count[dir] == 1 ? "copy" : "copies", zB, zT, bw, zF);
    }
}

/* "The copy" or "The N copies", for n copies, into z. */
static const char *the_copies(int64_t n, char *z, size_t nz)
{
    if (n == 1)
        snprintf(z, nz, "The copy");
    else
        snprintf(z, nz, "The %lld copies", (long long)n);
    return z;
}

/* Title words for the pageable copies of d: "N copies (B) to and from", "N host-to-device copies (B) from", ... into z. */
static void fmt_what(const struct dirs *d, char *z, size_t nz)
{
    char zB[32];
    vt__fmt_bytes(d->bytes[0] + d->bytes[1], zB, sizeof zB);
    if (d->count[0] && d->count[1])
        snprintf(z, nz, "%lld copies (%s) to and from", (long long)(d->count[0] + d->count[1]), zB);
    else
        snprintf(z, nz, "%lld %s %s (%s) %s", (long long)(d->count[0] + d->count[1]),
                 d->count[0] ? "host-to-device" : "device-to-host", d->count[0] + d->count[1] == 1 ? "copy" : "copies",
                 zB, d->count[0] ? "from" : "to");
}

/*
 * The window [*pA, *pB] of the pageable copies the finding after start-up counts (nCount of them): from the
 * first start to the last end of those that ended after the first kernel, less the start-up sites' (su) when
 * there are any and the groups hold every counted copy (else the pass's window, which holds them all too).
 * A window printed from it, pasted into export --from/--to, holds the copies counted, not start-up's.
 */
static void run_window(const struct vt_transfers *xf, const struct startup *su, int64_t nCount, int64_t *pA,
                       int64_t *pB)
{
    int64_t a = -1, b = -1, n = 0, ga = -1, gb = -1;
    for (int dir = 0; dir < 2; dir++) {
        const struct vt_xfer *x = &xf->x[dir];
        if (x->firstRunPageTs <= 0) continue;
        if (a < 0 || x->firstRunPageTs < a) a = x->firstRunPageTs;
        if (x->lastRunPageTs > b) b = x->lastRunPageTs;
    }
    if (su->count[0] + su->count[1] > 0) {
        for (int i = 0; i < su->nGroup; i++) {
            const struct pgroup *g = &su->aGroup[i];
            if (g->bStartup || !g->bLast) continue;
            n += g->n;
            if (ga < 0 || g->first < ga) ga = g->first;
            if (g->last > gb) gb = g->last;
        }
        if (n == nCount && ga >= 0) a = ga, b = gb;
    }
    *pA = a;
    *pB = b;
}

/*
 * The pageable-copy finding of trace iTrace, judged by the time the copies cost after
 * start-up (from the first kernel: copies that ended before it, weights moved to the GPU once,
 * are said but not counted), or an info finding when only start-up copies reach --min-bytes.
 * zSerial describes the run's serialized copy time (empty when not worth saying); *pbSaid is
 * set when the finding says it (its consequence). 0, or -1 when out of memory.
 */
static int pageable_finding(struct vt_result *r, int iTrace, const struct startup *su, const char *zSerial,
                            int64_t serialNs, int *pbSaid)
{
    struct vt_trace *t = &r->aTrace[iTrace];
    const struct vt_transfers *xf = &t->xf;
    int64_t t0 = xf->firstKernelTs > 0 ? xf->firstKernelTs : t->f.t0;
    int64_t nBatch = su->batchCount[0] + su->batchCount[1], span, dur = t->f.t1 - t->f.t0 > 0 ? t->f.t1 - t->f.t0 : 1;
    struct dirs all, pre, run;
    int64_t preCount, preBytes, preNs, nCount, nBytes, nNs, nSerial, a = -1, b = -1, bPre = su->last;
    int64_t needNs = 0, gapNs = 0, saveNs, ra, rb;
    double pct, pctSave;
    char zDir[2][400], zWhat[96], zT[32], zS[32], zO[32], zAt[128], zPre[640] = "", zIter[120] = "";
    char zYard[300], zNeed[32], zSave[32];
    const char *zDev;
    const struct link *pLink = host_link(t, &zDev);
    int sev, bPinned = 0;
    /* the run after start-up: from the first kernel on, its copies with the first step's input (first_batch)
     * copied before it, which the per-step figures count as one step's */
    span = t->f.t1 - t0 > 0 ? t->f.t1 - t0 : 1;
    /* every pageable copy, those of start-up (before the first kernel, or from sites that copied
     * only then) and those after it, by direction */
    for (int dir = 0; dir < 2; dir++) {
        const struct vt_xfer *x = &xf->x[dir];
        all.count[dir] = x->pageCount, all.bytes[dir] = x->pageBytes, all.ns[dir] = x->pageNs;
        pre.count[dir] = x->prePageCount + su->count[dir] - su->batchCount[dir];
        pre.bytes[dir] = x->prePageBytes + su->bytes[dir] - su->batchBytes[dir];
        pre.ns[dir] = x->prePageNs + su->ns[dir] - su->batchNs[dir];
        run.count[dir] = all.count[dir] - pre.count[dir];
        run.bytes[dir] = all.bytes[dir] - pre.bytes[dir];
        run.ns[dir] = all.ns[dir] - pre.ns[dir];
        if (x->lastPrePageTs > bPre) bPre = x->lastPrePageTs;
        if (x->pageCount == 0) continue;
        if (a < 0 || x->firstPageTs < a) a = x->firstPageTs;
        if (x->lastPageTs > b) b = x->lastPageTs;
    }
    preCount = pre.count[0] + pre.count[1], preBytes = pre.bytes[0] + pre.bytes[1], preNs = pre.ns[0] + pre.ns[1];
    nCount = run.count[0] + run.count[1], nBytes = run.bytes[0] + run.bytes[1], nNs = run.ns[0] + run.ns[1];
    /* start-up copies after the first kernel count as run without a kernel (an upper bound) */
    nSerial = xf->pageSerialNs - preNs;
    *pbSaid = 0;
    if (nNs < 0) nNs = 0;
    if (nSerial < 0) nSerial = 0;
    pct = 100.0 * (double)nNs / (double)span;
    /* what pinning saves: the copy time the GPU sat idle for want of the data (pinned copies issued
     * ahead with non_blocking=True overlap compute), or, when kernels ran through the copies, their
     * time beyond what the link carries (the yardstick: the fastest pinned copy in that direction,
     * else the host link's pinned rate), whichever is more */
    for (int dir = 0; dir < 2; dir++) {
        double yard = xf->x[dir].bestPinnedBw > 0 ? xf->x[dir].bestPinnedBw : pLink->gbps;
        int64_t need;
        if (run.count[dir] <= 0 || run.ns[dir] <= 0) continue;
        bPinned |= xf->x[dir].bestPinnedBw > 0;
        need = (int64_t)((double)run.bytes[dir] / yard);
        needNs += need;
        if (run.ns[dir] > need) gapNs += run.ns[dir] - need;
    }
    saveNs = nSerial > gapNs ? nSerial : gapNs;
    if (saveNs > nNs) saveNs = nNs;
    pctSave = 100.0 * (double)saveNs / (double)span;
    if (nCount > 0 && nBytes >= r->pOpts->minBytes) {
        sev = pageable_sev(pctSave);
        *pbSaid = zSerial[0] && sev > VT_SEV_INFO && nSerial * 2 >= serialNs;
        fmt_what(&run, zWhat, sizeof zWhat);
        fmt_directions(t, &all, zDir);
        vt__fmt_ns(nNs, zT, sizeof zT);
        vt__fmt_ns(nSerial, zS, sizeof zS);
        vt__fmt_ns(nNs - nSerial, zO, sizeof zO);
        if (xf->firstKernelTs > 0) {
            char zK[32];
            vt__fmt_at(t, t0, zK, sizeof zK);
            snprintf(zAt, sizeof zAt, "From the first kernel (at %s) on%s", zK,
                     nBatch > 0 ? ", with the first step's input copied before it" : "");
        } else
            snprintf(zAt, sizeof zAt, "With no kernel in the trace");
        /* the first step's input copied before the first kernel, then the start-up copies: one sentence each */
        size_t nPre = 0;
        if (nBatch > 0) {
            char zB[32], zP[32], zN[40];
            vt__fmt_bytes(su->batchBytes[0] + su->batchBytes[1], zB, sizeof zB);
            vt__fmt_ns(su->batchNs[0] + su->batchNs[1], zP, sizeof zP);
            int k = snprintf(zPre, sizeof zPre, " %s (%s, %s) before the first kernel, of sizes copied again in later "
                             "steps, %s the first step's input and counted.", the_copies(nBatch, zN, sizeof zN), zB,
                             zP, nBatch == 1 ? "is" : "are");
            nPre = k < 0 ? 0 : (size_t)k < sizeof zPre ? (size_t)k : sizeof zPre - 1;
        }
        if (preCount > 0) {
            char zB[32], zP[32], zN[40];
            vt__fmt_bytes(preBytes, zB, sizeof zB);
            vt__fmt_ns(preNs, zP, sizeof zP);
            snprintf(zPre + nPre, sizeof zPre - nPre, " %s (%s, %s) that ended before the first kernel%s %s start-up "
                     "(moved once, such as weights) and not counted.", the_copies(preCount, zN, sizeof zN), zB, zP,
                     su->count[0] + su->count[1] ? " or came from call sites that copied only at start-up" : "",
                     preCount == 1 ? "is" : "are");
        }
        if (t->ph.nIter > 0) {
            char zI[32];
            vt__fmt_ns(nNs / t->ph.nIter, zI, sizeof zI);
            snprintf(zIter, sizeof zIter, ", about %s per iteration over %d %s", zI, t->ph.nIter,
                     t->ph.nIter == 1 ? "iteration" : "iterations");
        }
        vt__fmt_ns(needNs, zNeed, sizeof zNeed);
        vt__fmt_ns(saveNs, zSave, sizeof zSave);
        if (bPinned)
            snprintf(zYard, sizeof zYard, "At the rate of the fastest pinned copy in the trace they would take %s",
                     zNeed);
        else
            snprintf(zYard, sizeof zYard, "No copy in the trace is pinned to compare with; over the host link (%s, "
                     "%s: about %.0f GB/s from pinned memory) they would take %s", pLink->zLink, zDev, pLink->gbps,
                     zNeed);
        run_window(xf, su, nCount, &ra, &rb);
        if (nBatch > 0 && (ra < 0 || su->batchFirst < ra)) ra = su->batchFirst;
        if (add(r, iTrace, sev, nBytes, nCount, ra, rb,
                vt__strdupf("%s pageable host memory: %.1f%% of the run after start-up", zWhat, pct),
                vt__strdupf("%s%s %s, they blocked the host thread for %s, %.1f%% of "
                            "that time%s; %s of it with no kernel running (the GPU waited for the data)%s%s.%s "
                            "%s. Pageable copies are staged through a driver buffer and block the host; pinned "
                            "memory with non_blocking=True overlaps them with compute: expected saving %s (%.1f%% of "
                            "the run after start-up), the time the GPU waited or the time beyond that rate, whichever "
                            "is more. Severity by that share: info under 2%%, low from 2%%, medium from 5%%, high "
                            "from 15%%.%s",
                            zDir[0], zDir[1], zAt, zT, pct, zIter, zS,
                            nSerial < nNs ? ", while kernels ran: " : ": overlaps no compute", nSerial < nNs ? zO : "",
                            zPre, zYard, zSave, pctSave, *pbSaid ? zSerial : ""),
                "Copy from pinned memory: DataLoader(..., pin_memory=True) and "
                "tensor.to('cuda', non_blocking=True); pin your own staging buffers with "
                "tensor.pin_memory() or torch.empty(..., pin_memory=True) and reuse them (in CUDA C, "
                "cudaMallocHost or cudaHostRegister).") != 0)
            return -1;
        return set_pageable_site(t, su, 0, su->limit, &r->aFind[r->nFind - 1]);
    }
    if (preCount > 0 && preBytes >= r->pOpts->minBytes) {
        fmt_what(&pre, zWhat, sizeof zWhat);
        fmt_directions(t, &pre, zDir);
        vt__fmt_ns(preNs, zT, sizeof zT);
        if (add(r, iTrace, VT_SEV_INFO, preBytes, preCount, a, bPre > a ? bPre : b,
                vt__strdupf("%s pageable host memory at start-up", zWhat),
                vt__strdupf("%s%s %s before the first kernel started%s: data moved to the GPU once (such "
                            "as weights), %s, %.1f%% of the run, a one-time cost that is not paid per step.",
                            zDir[0], zDir[1], preCount == 1 ? "It ended" : "They ended",
                            su->count[0] + su->count[1] ? " or came from call sites that copied only at start-up" : "",
                            zT, 100.0 * (double)preNs / (double)dur),
                "Only if start-up time matters: load weights straight to the GPU (torch.load(..., "
                "map_location='cuda'), safetensors' load_file(..., device='cuda')) or from pinned memory.") != 0)
            return -1;
        return set_pageable_site(t, su, 1, -1, &r->aFind[r->nFind - 1]);
    }
    return 0;
}

/* Pinned growth below this is info: host RAM, and what a short run's pinned ring filling looks like. */
#define SMALL_PINNED_GROWTH ((int64_t)64 << 20)

/*
 * Whether the pinned baseline aB (n points, -1 where a slice saw no pinned allocation) stopped rising: its
 * last rise came with a quarter of the points or more after it, in which it rose no more. PyTorch's caching
 * host allocator keeps every block it pinned and pins a larger one only for a larger batch than it holds
 * blocks for, so a cache of pinned blocks that reached its size stops (a batch-size finder doubling the
 * batch, then training at one size, had a medium "keeps growing" of +3.98 GiB); pinned batches kept rise
 * to the end.
 */
static int pinned_stopped(const int64_t *aB, int n)
{
    int last = -1;
    int64_t prev = -1;
    for (int k = 0; k < n; k++) {
        if (aB[k] < 0) continue;
        if (prev >= 0 && aB[k] > prev) last = k;
        prev = aB[k];
    }
    return last >= 0 && (n - 1 - last) * 4 >= n - 1;
}

/*
 * Whether the pinned baseline's rise lies in the run's final evaluation: the last phase is an evaluation
 * whose last slice is the trace's, and before its first slice the baseline (aB, n points from slice
 * VT_SLICES / 8) rose less than minRise or stopped. An evaluation reading a DataLoader of its own with
 * pin_memory=True pins a block for each of its batches in flight (num_workers x prefetch_factor of them),
 * larger than training's, which the caching host allocator keeps: in one pass that ends the run, that ring
 * filling cannot be told from pinned batches kept, nor seen to stop (an evaluation 6 times training's
 * batch, 11 batches, was a medium "keeps growing" of +1.27 GiB). Pinned batches kept in training rise
 * before it.
 */
static int pinned_rise_in_final_eval(const struct vt_trace *t, const int64_t *aB, int n, int64_t minRise)
{
    const struct vt_phase *p = t->ph.n > 0 ? &t->ph.a[t->ph.n - 1] : NULL;
    int64_t first = -1, last = -1;
    int k0, nPre;
    if (!p || p->kind != VT_PHASE_EVAL || vt__slice_of(p->end, t->f.t0, t->f.t1 + 1) != VT_SLICES - 1) return 0;
    k0 = vt__slice_of(p->start, t->f.t0, t->f.t1 + 1);
    nPre = k0 - VT_SLICES / 8; /* the points wholly before the evaluation's first slice */
    if (nPre < 2 || nPre > n) return 0;
    for (int k = 0; k < nPre; k++)
        if (aB[k] >= 0) {
            if (first < 0) first = aB[k];
            last = aB[k];
        }
    return last - first < minRise || pinned_stopped(aB, nPre);
}

/* Pageable-copy, copy/compute serialization and pinned-growth findings of trace iTrace. */
static int transfer_end(void *st, struct vt_result *r, int iTrace)
{
    (void)st;
    struct vt_trace *t = &r->aTrace[iTrace];
    const struct vt_opts *o = r->pOpts;
    /* after start-up: copies before the first kernel have nothing to overlap */
    int64_t t0 = t->xf.firstKernelTs > 0 ? t->xf.firstKernelTs : t->f.t0;
    int64_t dur = t->f.t1 - t0, rise, serial;
    char zB[32], zT[32], zP[32], zSerial[300] = "";
    int bPageable = 0, bSerial, rc;
    struct startup su;
    /* start-up ends at the first iteration, or (none known) after a quarter of the run */
    su.limit = t0 + dur / 4;
    if (t->ph.nIter > 0) {
        su.limit = t->ph.aIter[0].start;
        for (int i = 1; i < t->ph.nIter; i++)
            if (t->ph.aIter[i].start < su.limit) su.limit = t->ph.aIter[i].start;
    }
    /* a size copied before the first kernel and again in half the iterations or more (twice without
     * iterations) is the first step's input */
    if (startup_sites(t, t0, &su) != SQLITE_OK ||
        first_batch(t, t->xf.firstKernelTs > 0 ? t->xf.firstKernelTs : t->f.t0 - 1,
                    t->ph.nIter / 2 > 2 ? t->ph.nIter / 2 : 2, t->ph.nIter, &su) != SQLITE_OK) {
        free(su.aGroup);
        return -1;
    }
    /* the first step's input ran with no kernel, as the run's copies */
    serial = t->xf.copySerialNs - t->xf.preNs - su.ns[0] - su.ns[1] + su.batchNs[0] + su.batchNs[1];
    if (serial < 0) serial = 0;
    /* copy time with no kernel running, worth saying when it is a tenth of the run */
    bSerial = t->xf.copyNs > 0 && t->xf.kernelBusyNs > 0 && serial * 10 >= dur && serial >= 1000000;
    if (bSerial) {
        vt__fmt_ns(serial, zT, sizeof zT);
        vt__fmt_ns(t->xf.kernelBusyNs, zP, sizeof zP);
        snprintf(zSerial, sizeof zSerial, " Host-device copies ran for %s (%.1f%% of the run after start-up) while no "
                 "kernel was running (kernels were busy %s in total).", zT, 100.0 * (double)serial / (double)dur, zP);
    }
    rc = pageable_finding(r, iTrace, &su, zSerial, serial, &bPageable);
    free(su.aGroup); /* the groups' last use */
    if (rc != 0) return -1;
    if (bSerial && !bPageable) {
        double pct = 100.0 * (double)serial / (double)dur;
        vt__fmt_ns(serial, zT, sizeof zT);
        /* the copies its time counts: those after start-up (the span from the first kernel holds them) */
        int64_t nCopy = t->xf.x[0].count + t->xf.x[1].count - t->xf.preCount - su.count[0] - su.count[1] +
                        su.batchCount[0] + su.batchCount[1];
        int64_t nBytes = t->xf.x[0].bytes + t->xf.x[1].bytes - t->xf.preBytes - su.bytes[0] - su.bytes[1] +
                         su.batchBytes[0] + su.batchBytes[1];
        if (add(r, iTrace, pct >= 25 ? VT_SEV_MEDIUM : VT_SEV_LOW, nBytes, nCopy, t0, t->f.t1,
                vt__strdupf("Copies serialized with compute: %s of copy time with no kernel running", zT),
                vt__strdupf("%s The GPU waits for data instead of overlapping the next batch's copy with this "
                            "batch's compute.", zSerial + 1),
                "Overlap copies with compute: pinned memory plus non_blocking=True, DataLoader with "
                "pin_memory=True and num_workers > 0 to prefetch, or issue the copy of the next batch on a "
                "separate CUDA stream.") != 0)
            return -1;
    }
    {
        int64_t aB[VT_SLICES];
        int n = 0;
        int iDev = -1;
        int64_t minRise;
        for (int d = 0; d < t->tl.nDev; d++)
            if (t->tl.aDev[d].id == VT_ACCT_PINNED) iDev = d;
        /* a pinned-memory cache fills in steps: only a rise of a tenth of its peak counts */
        minRise = iDev >= 0 && t->tl.aDev[iDev].peak / 10 > o->minBytes ? t->tl.aDev[iDev].peak / 10 : o->minBytes;
        for (int k = VT_SLICES / 8; k < VT_SLICES; k++) aB[n++] = t->tl.pinnedSlice[k];
        if (vt__trend(aB, n, minRise, &rise)) {
            /* page-locked host memory is the host's RAM: a few MiB more (a short run's pinned ring of a
             * loader's depth filling) is said, not counted as a problem */
            int bSmall = rise < SMALL_PINNED_GROWTH, bStopped = pinned_stopped(aB, n);
            int bEval = !bStopped && pinned_rise_in_final_eval(t, aB, n, minRise);
            vt__fmt_bytes(rise, zB, sizeof zB);
            vt__fmt_bytes(iDev >= 0 ? t->tl.aDev[iDev].peak : 0, zP, sizeof zP);
            if (add(r, iTrace, bSmall || bStopped || bEval ? VT_SEV_INFO : VT_SEV_MEDIUM, rise, n, t->f.t0, t->f.t1,
                    bStopped ? vt__strdupf("Pinned host memory grew +%s, then stopped", zB)
                    : bEval  ? vt__strdupf("Pinned host memory grew +%s in the final evaluation", zB)
                             : vt__strdupf("Pinned host memory keeps growing: +%s over the run", zB),
                    vt__strdupf("The lowest pinned (page-locked) host memory in each slice of the run rose by "
                                "%s, peaking at %s%s%s", zB, zP,
                                bStopped ? ", and rose no more over the last quarter of the run or longer: a cache "
                                           "of pinned blocks that reached its size (PyTorch's caching host "
                                           "allocator keeps the blocks it pinned for reuse, and pins larger ones "
                                           "only for larger batches), not counted as a problem."
                                : bEval ? ", all of it in the evaluation that ends the run, after training's pinned "
                                          "memory had stopped rising: an evaluation DataLoader with pin_memory=True "
                                          "pins a block for each batch it holds in flight (num_workers x "
                                          "prefetch_factor), larger for larger batches, and PyTorch's caching host "
                                          "allocator keeps them; in one pass that ends the run this cannot be told "
                                          "from pinned batches kept, so it is not counted as a problem."
                                         : ": pinned buffers are allocated faster than released.",
                                bSmall && !bStopped ? " Under 64 MiB: a pinned ring of the loader's depth filling in a "
                                                      "short run looks the same, and so little page-locked memory costs "
                                                      "the host nothing."
                                                    : ""),
                    "With DataLoader(pin_memory=True), lower num_workers or prefetch_factor so fewer "
                    "pinned batches wait in the queue; reuse pinned staging buffers instead of pinning "
                    "new tensors every step; drop references (del, gc.collect()) to pinned batches you "
                    "no longer need.") != 0)
                return -1;
            if (set_pinned_site(t, iDev, &r->aFind[r->nFind - 1]) != 0) return -1;
        }
    }
    return 0;
}

const struct vt_detector vt__detector_transfer = {"transfer", 0, 0, NULL, NULL, transfer_end, NULL};
