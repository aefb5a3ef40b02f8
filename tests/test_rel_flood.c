/* Reliability: producers faster than the writer — memory stays bounded, every drop is counted exactly and reported. */
#include <cupti_activity.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "cli_util.h"
#include "core_util.h"
#include "vramtrace/schema.h"

/*
 * N_PRODUCERS threads submit API-call host records and fill every activity
 * buffer the writer will hand out, for FLOOD_MS, far faster than one writer
 * thread can insert. The writer is configured with a memory bound; the test
 * samples the process's resident memory throughout and checks:
 *
 *  - growth of VmRSS over the run stays under max_memory + RSS_SLACK (SQLite's
 *    page cache, the decoder's maps, thread stacks), while what was offered
 *    would have needed many times that (not asserted under ASan, whose
 *    quarantine keeps freed memory resident);
 *  - every host record is either a row or counted: api_call rows = accepted,
 *    dropped(source 1) = meta dropped_queue = refused = vt__writer_dropped;
 *  - every refused buffer is counted (buffers_refused) and every kernel in an
 *    accepted buffer is a row. For each refused buffer the test reports, as
 *    the glue does for CUPTI's own drop count, BUF_RECORDS dropped records
 *    (source 0), so the trace's total loss is known exactly;
 *  - `vramtrace info` and `vramtrace analyze` (text and JSON) both state that
 *    total.
 */

#if defined(__SANITIZE_ADDRESS__)
#define REL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REL_ASAN 1
#endif
#endif

#define N_PRODUCERS 4
#define FLOOD_MS 1500
#define BUF_RECORDS 100 /* records CUPTI "drops" per refused buffer, reported like the glue does */
#define RSS_SLACK ((long)32 << 20) /* the writer's 16 MiB SQLite page cache + 16 MiB of maps, stacks, arenas */

struct producer {
    pthread_t th;
    struct vt_writer *w;
    int id;
    uint64_t nOk, nRefused, nKernel, nBufRefused;
};

static atomic_int g_bStop;

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Resident set size of this process in bytes (VmRSS), or -1. */
static long rss_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char z[256];
    long n = -1;
    if (!f) return -1;
    while (fgets(z, sizeof z, f))
        if (sscanf(z, "VmRSS: %ld", &n) == 1) break;
    fclose(f);
    return n < 0 ? -1 : n * 1024;
}

static void *producer_main(void *pArg)
{
    struct producer *p = pArg;
    uint32_t corr = 1;
    while (!atomic_load(&g_bStop)) {
        struct vt_hrec h;
        uint8_t *buf;
        size_t cap = 0, off = 0;
        int i;
        for (i = 0; i < 64; i++) {
            memset(&h, 0, sizeof h);
            h.type = VT_HREC_API_CALL;
            h.u.api.api = VT_API_ID_100;
            h.u.api.correlation = corr++;
            h.u.api.start = corr;
            h.u.api.end = corr + 1;
            h.u.api.thread = p->id;
            if (vt__writer_submit(p->w, &h) == 0) p->nOk++;
            else p->nRefused++;
        }
        buf = vt__writer_buffer_alloc(p->w, &cap);
        if (buf) {
            CUpti_ActivityKernel10 k;
            memset(&k, 0, sizeof k);
            k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
            k.name = "rel_flood_kernel";
            k.streamId = (uint32_t)p->id;
            for (;;) {
                k.correlationId = corr++;
                k.start = corr;
                k.end = corr + 1;
                if (core_lay(buf, cap, &off, &k, sizeof k) != 0) break;
                p->nKernel++;
            }
            vt__writer_buffer_submit(p->w, buf, off);
        } else {
            p->nBufRefused++;
        }
    }
    return NULL;
}

/* Flood a writer at zPath; returns the exact number of records the trace must report lost. */
static uint64_t flood(const char *zPath, int bPrint)
{
    static struct producer aProd[N_PRODUCERS];
    struct vt_writer_config cfg;
    struct vt_writer_stats st;
    struct vt_writer *w;
    struct vt_hrec h;
    uint64_t nOk = 0, nRefused = 0, nKernel = 0, nBufRefused = 0, tEnd, nLost;
    long rss0, rssMax, r;
    sqlite3 *db;
    int i;
    core_config(&cfg);
    cfg.buffer_size = 256 * 1024;
    cfg.host_ring_records = 32768;
    cfg.max_memory = 16u << 20; /* ring 7 MiB + 36 buffers */
    rss0 = rssMax = rss_bytes();
    ASSERT(rss0 > 0);
    w = core_open(zPath, &cfg);
    ASSERT_EQ(0, vt__writer_start(w));
    atomic_store(&g_bStop, 0);
    for (i = 0; i < N_PRODUCERS; i++) {
        memset(&aProd[i], 0, sizeof aProd[i]);
        aProd[i].w = w;
        aProd[i].id = i + 1;
        ASSERT_EQ(0, pthread_create(&aProd[i].th, NULL, producer_main, &aProd[i]));
    }
    tEnd = mono_ms() + FLOOD_MS;
    while (mono_ms() < tEnd) {
        if ((r = rss_bytes()) > rssMax) rssMax = r;
        usleep(5000);
    }
    atomic_store(&g_bStop, 1);
    for (i = 0; i < N_PRODUCERS; i++) {
        ASSERT_EQ(0, pthread_join(aProd[i].th, NULL));
        nOk += aProd[i].nOk;
        nRefused += aProd[i].nRefused;
        nKernel += aProd[i].nKernel;
        nBufRefused += aProd[i].nBufRefused;
    }
    if ((r = rss_bytes()) > rssMax) rssMax = r;
    vt__writer_stats(w, &st);
    ASSERT_EQ(nRefused, vt__writer_dropped(w));
    ASSERT_EQ(nBufRefused, st.buffers_refused);
    /* What CUPTI would have dropped for want of a buffer, reported the way the glue reports it. */
    memset(&h, 0, sizeof h);
    h.type = VT_HREC_DROPPED;
    h.u.dropped.source = VT_DROP_CUPTI;
    h.u.dropped.zWhat = "activity records (no buffer within the memory bound)";
    h.u.dropped.count = nBufRefused * BUF_RECORDS;
    for (i = 0; vt__writer_submit(w, &h) != 0; i++) { /* the producers are gone: room comes soon */
        ASSERT(i < 10000);
        usleep(1000);
    }
    nRefused += (uint64_t)i; /* each refused try of this record is a counted queue drop too */
    ASSERT_EQ(0, vt__writer_close(w, 60000));
    if (bPrint)
        printf("       %d producers, %d ms: offered %llu host records (%.0f MiB), accepted %llu, refused %llu;"
               " %llu kernels; %llu buffers refused; RSS %+.1f MiB (bound %zu MiB + %ld MiB)\n",
               N_PRODUCERS, FLOOD_MS, (unsigned long long)(nOk + nRefused),
               (double)(nOk + nRefused) * sizeof(struct vt_hrec) / 1048576.0, (unsigned long long)nOk,
               (unsigned long long)nRefused, (unsigned long long)nKernel, (unsigned long long)nBufRefused,
               (double)(rssMax - rss0) / 1048576.0, cfg.max_memory >> 20, RSS_SLACK >> 20);
    /* A flood indeed: the writer could not take everything. */
    ASSERT(nRefused > 0);
#if !defined(REL_ASAN)
    /* (Under ASan freed memory sits in the quarantine and shadow memory grows with it.) */
    ASSERT(rssMax - rss0 <= (long)cfg.max_memory + RSS_SLACK);
#endif

    db = core_open_ro(zPath);
    ASSERT_EQ(nOk, core_q_int(db, "SELECT count(*) FROM api_call"));
    ASSERT_EQ(nKernel, core_q_int(db, "SELECT count(*) FROM kernel"));
    ASSERT_EQ(nRefused, core_q_int(db, "SELECT coalesce(sum(count), 0) FROM dropped WHERE source = 1"));
    ASSERT_EQ(nRefused, core_q_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'dropped_queue'"));
    ASSERT_EQ(nBufRefused * BUF_RECORDS,
              core_q_int(db, "SELECT coalesce(sum(count), 0) FROM dropped WHERE source = 0"));
    ASSERT_EQ(0, core_q_int(db, "SELECT count(*) FROM dropped WHERE source NOT IN (0, 1)"));
    ASSERT_STREQ("0", core_q_rows(db, "SELECT value FROM meta WHERE key = 'dropped_writer'"));
    ASSERT_STREQ("1", core_q_rows(db, "SELECT value FROM meta WHERE key = 'closed_cleanly'"));
    sqlite3_close(db);
    nLost = nRefused + nBufRefused * BUF_RECORDS;
    return nLost;
}

TEST(flood_bounded_and_counted)
{
    char zPath[128];
    core_tmp_path(zPath, sizeof zPath, "flood.db");
    flood(zPath, 1);
    core_remove_trace(zPath);
    CORE_LEAK_CHECK();
}

TEST(flood_drops_in_info_and_analyze)
{
    const char *zExe = cli_vramtrace(), *zDir = cli_tmpdir();
    char zTrace[PATH_MAX], zOut[PATH_MAX], zErr[PATH_MAX], zWant[128];
    char *zText;
    uint64_t nLost;
    snprintf(zTrace, sizeof zTrace, "%s/flood.db", zDir);
    snprintf(zOut, sizeof zOut, "%s/out.txt", zDir);
    snprintf(zErr, sizeof zErr, "%s/err.txt", zDir);
    nLost = flood(zTrace, 0);
    {
        char *argv[] = {(char *)zExe, "info", zTrace, NULL};
        ASSERT_EQ(0, cli_run(argv, NULL, zOut, zErr));
        zText = cli_read(zOut);
        snprintf(zWant, sizeof zWant, "WARNING: %llu records lost", (unsigned long long)nLost);
        ASSERT_CONTAINS(zText, zWant);
        free(zText);
    }
    {
        char *argv[] = {(char *)zExe, "info", "--json", zTrace, NULL};
        ASSERT_EQ(0, cli_run(argv, NULL, zOut, zErr));
        zText = cli_read(zOut);
        snprintf(zWant, sizeof zWant, "\"dropped\":{\"total\":%llu", (unsigned long long)nLost);
        ASSERT_CONTAINS(zText, zWant);
        free(zText);
    }
    {
        char *argv[] = {(char *)zExe, "analyze", "--no-write", zTrace, NULL};
        ASSERT_EQ(0, cli_run(argv, NULL, zOut, zErr));
        zText = cli_read(zOut);
        snprintf(zWant, sizeof zWant, "%llu records were lost while tracing", (unsigned long long)nLost);
        ASSERT_CONTAINS(zText, zWant);
        free(zText);
    }
    {
        char *argv[] = {(char *)zExe, "analyze", "--no-write", "--format", "json", zTrace, NULL};
        ASSERT_EQ(0, cli_run(argv, NULL, zOut, zErr));
        zText = cli_read(zOut);
        snprintf(zWant, sizeof zWant, "%llu records were lost while tracing", (unsigned long long)nLost);
        ASSERT_CONTAINS(zText, zWant);
        free(zText);
    }
    cli_cleanup();
}

VT_TEST_LIST(T(flood_bounded_and_counted) T(flood_drops_in_info_and_analyze))
