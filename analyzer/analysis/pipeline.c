/* The analysis driver: each trace read, phased, replayed and judged by the table of detectors. */
#include "analysis.h"

#include <pthread.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The detectors, in the order their findings are made (the report sorts them by severity). */
static const struct vt_detector *const aDetector[] = {
    &vt__detector_leak, &vt__detector_retained, &vt__detector_spike, &vt__detector_transfer, &vt__detector_oom,
};
#define N_DETECTOR ((int)(sizeof aDetector / sizeof aDetector[0]))

/* The scan's kernel feed into the transfer pass, started when the kernel table's pass begins. */
struct feed {
    struct vt_trace *t;
    struct vt_xfer_run *x;
    int rc;
};

static int feed_start(void *pArg)
{
    struct feed *p = pArg;
    p->rc = vt__xfer_begin(p->t, &p->x);
    return p->rc;
}

static int feed_kernel(void *pArg, int64_t start, int64_t end)
{
    struct feed *p = pArg;
    return vt__xfer_kernel(p->x, start, end);
}

/* Release the detectors' states (aSt[i] may be NULL). */
static void states_free(void **aSt)
{
    for (int i = 0; i < N_DETECTOR; i++) {
        if (aSt[i] && aDetector[i]->xFree) aDetector[i]->xFree(aSt[i]);
        free(aSt[i]);
    }
}

/*
 * The first stage of trace iTrace of r: read zPath (the scan feeding the transfer pass). Every trace is
 * read before any is analyzed further, so that the one time origin of the traces read together is known
 * (figures.h) before a detector writes a time into a finding. Returns a VT_EXIT code (one line printed on
 * error; the trace is then closed).
 */
static int open_one(struct vt_result *r, int iTrace, const char *zPath, const struct vt_opts *o)
{
    struct vt_trace *t = &r->aTrace[iTrace];
    struct feed fd = {t, NULL, SQLITE_OK};
    struct vt_kernel_feed kf = {&fd, feed_start, feed_kernel, 0};
    int rc = vt__read_open(&t->f, zPath, (o->bNoWrite ? 0 : VT_READ_WRITE) | VT_READ_KEEP, &kf);
    if (fd.x) { /* finish the pass when the scan fed it every kernel; else vt__transfers makes it */
        int bDone = rc == VT_EXIT_OK && kf.bDone;
        t->xf.bDone = vt__xfer_end(fd.x, bDone) == SQLITE_OK && bDone;
    }
    if (rc == VT_EXIT_OK) sqlite3_db_release_memory(t->f.db); /* the others are read meanwhile: keep little */
    return rc;
}

/*
 * The second stage of trace iTrace of r, read by open_one (or lent, vt__analyze_read): write back if it
 * can, find phases, replay it through the detectors, collect their findings. The trace's connection stays
 * open (the caller closes it). Returns a VT_EXIT code (one line printed on error).
 */
static int analyze_one(struct vt_result *r, int iTrace, const char *zPath, const struct vt_opts *o)
{
    struct vt_trace *t = &r->aTrace[iTrace];
    void *aSt[N_DETECTOR] = {NULL};
    int rc = VT_EXIT_OK, i;

    if (rc == VT_EXIT_OK && t->f.bWritable) rc = vt__writeback_begin(t);
    if (rc == VT_EXIT_OK) rc = vt__phases(t, o);
    for (i = 0; rc == VT_EXIT_OK && i < N_DETECTOR; i++) {
        aSt[i] = calloc(1, aDetector[i]->nState ? aDetector[i]->nState : 1);
        if (!aSt[i] || (aDetector[i]->xBegin && aDetector[i]->xBegin(aSt[i], t, o) != 0)) {
            vt__errorf("%s: out of memory", zPath);
            rc = VT_EXIT_INTERNAL;
        }
    }
    if (rc == VT_EXIT_OK) rc = vt__replay(t, o, aDetector, aSt, N_DETECTOR);
    if (rc == VT_EXIT_OK) rc = vt__transfers(t);
    for (i = 0; rc == VT_EXIT_OK && i < N_DETECTOR; i++)
        if (aDetector[i]->xEnd && aDetector[i]->xEnd(aSt[i], r, iTrace) != 0) {
            vt__errorf("%s: out of memory", zPath);
            rc = VT_EXIT_INTERNAL;
        }
    if (rc == VT_EXIT_OK && vt__fit(r, iTrace) != 0) {
        vt__errorf("%s: out of memory", zPath);
        rc = VT_EXIT_INTERNAL;
    }
    if (rc == VT_EXIT_OK && vt__findings_group(r) != 0) { /* this process's repeats: as reported, and as written back */
        vt__errorf("%s: out of memory", zPath);
        rc = VT_EXIT_INTERNAL;
    }
    if (rc == VT_EXIT_OK && vt__sitecurves_keep(r, iTrace) != 0) {
        vt__errorf("%s: out of memory", zPath);
        rc = VT_EXIT_INTERNAL;
    }
    if (rc == VT_EXIT_OK && t->pWb) rc = vt__writeback_end(r, iTrace);
    t->wallStart = rc == VT_EXIT_OK && t->f.bTimes ? vt__read_wall(&t->f, t->f.t0) : -1;
    vt__sitecurves_drop(t);
    states_free(aSt);
    vt__writeback_free(t);
    return rc;
}

/* Drop the findings of trace iTrace (it failed midway): they would describe a partial read. */
static void findings_drop(struct vt_result *r, int iTrace)
{
    int n = 0;
    for (int k = 0; k < r->nFind; k++) {
        struct vt_finding *x = &r->aFind[k];
        if (x->trace != iTrace) {
            r->aFind[n++] = *x;
            continue;
        }
        vt__finding_free(x);
    }
    r->nFind = n;
}

/* One trace's analysis, done by a worker into a result of its own (trace 0), merged in order. */
struct job {
    const char *zPath;
    struct vt_result sub;
    int rc;
    int iSameFile;          /* the index of an earlier job naming the same file (not analyzed again), or -1 */
};

/* The work shared by the workers: the next job to take, how many are done, in which stage. */
struct pool {
    struct job *aJob;
    int nJob;
    int stage;                 /* 0: read every trace (open_one); 1: analyze each one read (analyze_one) */
    const struct vt_opts *o;
    pthread_mutex_t mu;
    pthread_cond_t done;
    int iNext, nDone;
};

/* Stage 0 or 1 of one trace, into j->sub (its own result: the detectors' findings, the trace read). */
static void run_job(struct job *j, const struct vt_opts *o, int stage)
{
    struct vt_result *s = &j->sub;
    if (stage == 0) {
        memset(s, 0, sizeof *s);
        s->pOpts = o;
        s->aTrace = calloc(1, sizeof *s->aTrace);
        if (!s->aTrace) {
            vt__errorf("%s: out of memory", j->zPath);
            j->rc = VT_EXIT_INTERNAL;
            return;
        }
        j->rc = open_one(s, 0, j->zPath, o);
    } else if (j->rc == VT_EXIT_OK) {
        j->rc = analyze_one(s, 0, j->zPath, o);
        vt__read_done(&s->aTrace[0].f); /* the connection goes; what was read stays for the report */
    }
    if (j->rc == VT_EXIT_OK) {
        s->nTrace = 1;
        return;
    }
    if (!s->aTrace) return;
    /* not read: nothing of it is kept (the trace slot and the findings' arrays included) */
    findings_drop(s, 0);
    vt__trace_free(&s->aTrace[0]);
    vt__result_free(s);
}

/* A worker: take jobs in order until none is left. */
static void *worker(void *pArg)
{
    struct pool *p = pArg;
    for (;;) {
        int i;
        pthread_mutex_lock(&p->mu);
        i = p->iNext < p->nJob ? p->iNext++ : -1;
        pthread_mutex_unlock(&p->mu);
        if (i < 0) return NULL;
        if (p->aJob[i].iSameFile < 0) run_job(&p->aJob[i], p->o, p->stage);
        pthread_mutex_lock(&p->mu);
        p->nDone++;
        pthread_cond_signal(&p->done);
        pthread_mutex_unlock(&p->mu);
    }
}

/* Seconds on the monotonic clock. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Wait for every job; with o->bProgress, from 2 s on, one line on stderr rewritten in place
 * (how many traces are done), erased at the end.
 */
static void wait_jobs(struct pool *p, const struct vt_opts *o)
{
    double t0 = now_s();
    int bShown = 0;
    pthread_mutex_lock(&p->mu);
    while (p->nDone < p->nJob) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 250000000L;
        if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&p->done, &p->mu, &until);
        if (o->bProgress && now_s() - t0 >= 2.0) {
            fprintf(stderr, "\rvramtrace: analyzing: %d of %d trace%s done, %.0f s ", p->nDone, p->nJob,
                    p->nJob == 1 ? "" : "s", now_s() - t0);
            bShown = 1;
        }
    }
    pthread_mutex_unlock(&p->mu);
    if (bShown) fputs("\r\033[K", stderr);
}

/* Move job j's trace and findings into r as trace r->nTrace. Returns 0, or -1 when out of memory. */
static int merge_job(struct vt_result *r, struct job *j)
{
    struct vt_result *s = &j->sub;
    if (r->nFind + s->nFind > r->nFindAlloc) {
        int nNew = r->nFind + s->nFind + 64;
        struct vt_finding *a = realloc(r->aFind, sizeof *a * (size_t)nNew);
        if (!a) return -1;
        r->aFind = a;
        r->nFindAlloc = nNew;
    }
    for (int k = 0; k < s->nFind; k++) { /* trace 0 of its own result becomes trace r->nTrace */
        struct vt_finding *x = &r->aFind[r->nFind++];
        *x = s->aFind[k];
        x->trace = r->nTrace;
        for (int m = 0; x->aTraces && m < x->nTraces; m++) x->aTraces[m] = r->nTrace;
    }
    r->aTrace[r->nTrace++] = s->aTrace[0];
    free(s->aFind);
    free(s->aTrace);
    memset(s, 0, sizeof *s);
    return 0;
}

/*
 * The jobs naming a file an earlier job names (the same device and inode: one file given twice,
 * under the same or another name) are marked with that job's index, not to be analyzed again.
 */
static void same_files(struct job *aJob, int nJob)
{
    struct stat *aSt = calloc((size_t)(nJob > 0 ? nJob : 1), sizeof *aSt);
    char *aOk = calloc((size_t)(nJob > 0 ? nJob : 1), 1);
    for (int i = 0; i < nJob; i++) aJob[i].iSameFile = -1;
    if (!aSt || !aOk) goto done; /* out of memory: each is analyzed, as given */
    for (int i = 0; i < nJob; i++) {
        aOk[i] = stat(aJob[i].zPath, &aSt[i]) == 0 && S_ISREG(aSt[i].st_mode);
        for (int k = 0; aOk[i] && k < i; k++)
            if (aOk[k] && aSt[k].st_dev == aSt[i].st_dev && aSt[k].st_ino == aSt[i].st_ino) {
                aJob[i].iSameFile = aJob[k].iSameFile >= 0 ? aJob[k].iSameFile : k;
                break;
            }
    }
done:
    free(aSt);
    free(aOk);
}

/* Record that an input was read as trace k, which had nBefore notes: the note added since says so (none when
 * its notes were full). */
static void once(struct vt_result *r, int k, int nBefore)
{
    const struct vt_tracefile *f = &r->aTrace[k].f;
    if (f->nNote > nBefore) r->aOnce[r->nOnce].trace = k, r->aOnce[r->nOnce++].note = f->nNote - 1;
}

/*
 * The trace of r that is the process a is too (the same host, pid and wall-clock start: two traces of
 * one process, such as a copy of a trace), or -1. Traces whose pid or start is unknown are not matched.
 */
static int same_process(const struct vt_result *r, const struct vt_trace *a)
{
    if (!a->f.zPid[0] || a->wallStart < 0) return -1;
    for (int k = 0; k < r->nTrace; k++) {
        const struct vt_trace *b = &r->aTrace[k];
        if (b->wallStart == a->wallStart && !strcmp(b->f.zPid, a->f.zPid) && !strcmp(b->f.zHost, a->f.zHost)) return k;
    }
    return -1;
}

int vt__analyze(const char **azPath, int nPath, const struct vt_opts *o, struct vt_result *r)
{
    struct pool p;
    pthread_t aThread[VT_JOBS_MAX];
    int rcFirst = VT_EXIT_OK, nThread, nStarted = 0, i;
    long nCpu = sysconf(_SC_NPROCESSORS_ONLN);
    memset(r, 0, sizeof *r);
    memset(&p, 0, sizeof p);
    r->pOpts = o;
    if (vt__phase_check_opts(o) != VT_EXIT_OK) return VT_EXIT_USAGE; /* the same for every trace */
    r->aTrace = calloc((size_t)(nPath > 0 ? nPath : 1), sizeof *r->aTrace);
    r->azFailed = calloc((size_t)(nPath > 0 ? nPath : 1), sizeof *r->azFailed);
    r->aOnce = calloc((size_t)(nPath > 0 ? nPath : 1), sizeof *r->aOnce);
    p.aJob = calloc((size_t)(nPath > 0 ? nPath : 1), sizeof *p.aJob);
    if (!r->aTrace || !r->azFailed || !r->aOnce || !p.aJob) {
        free(p.aJob);
        return VT_EXIT_INTERNAL;
    }
    for (i = 0; i < nPath; i++) p.aJob[i].zPath = azPath[i];
    same_files(p.aJob, nPath);
    p.nJob = nPath;
    p.o = o;
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.done, NULL);
    nThread = o->nJobs > 0 ? o->nJobs : nCpu > 0 ? (int)nCpu : 1;
    if (nThread > nPath) nThread = nPath;
    if (nThread > VT_JOBS_MAX) nThread = VT_JOBS_MAX;
    for (p.stage = 0; p.stage < 2; p.stage++) {
        p.iNext = p.nDone = 0;
        nStarted = 0;
        /* one trace at a time needs no thread (and keeps a single-trace run on the caller's stack) */
        if (nThread > 1 || o->bProgress)
            for (; nStarted < nThread; nStarted++)
                if (pthread_create(&aThread[nStarted], NULL, worker, &p) != 0) break;
        if (nStarted > 0) wait_jobs(&p, o);
        else worker(&p);
        for (i = 0; i < nStarted; i++) pthread_join(aThread[i], NULL);
        if (p.stage == 0) { /* every trace read: the one time origin of them all (figures.h) */
            struct vt_tracefile **apF = calloc((size_t)(nPath > 0 ? nPath : 1), sizeof *apF);
            if (!apF) {
                vt__errorf("analyze: out of memory");
                for (i = 0; i < nPath; i++)
                    if (p.aJob[i].rc == VT_EXIT_OK) p.aJob[i].rc = VT_EXIT_INTERNAL;
                continue;
            }
            for (i = 0; i < nPath; i++) apF[i] = p.aJob[i].rc == VT_EXIT_OK && p.aJob[i].iSameFile < 0 ? &p.aJob[i].sub.aTrace[0].f : NULL;
            vt__figures_origin(apF, nPath);
            free(apF);
        }
    }
    pthread_cond_destroy(&p.done);
    pthread_mutex_destroy(&p.mu);
    /* in the order given, whatever order they finished in */
    for (i = 0; i < nPath; i++) {
        struct job *j = &p.aJob[i];
        int k;
        if (j->iSameFile >= 0) { /* one file given twice: said once, counted once */
            const struct job *e = &p.aJob[j->iSameFile];
            for (k = 0; e->rc == VT_EXIT_OK && k < r->nTrace && r->aTrace[k].f.zPath != e->zPath; k++) {}
            if (e->rc == VT_EXIT_OK && k < r->nTrace) {
                int nBefore = r->aTrace[k].f.nNote;
                vt__read_note(&r->aTrace[k].f, "%s was given again as %s: the same file, analyzed and counted once",
                              e->zPath, j->zPath);
                once(r, k, nBefore);
            }
            continue;
        }
        if (j->rc == VT_EXIT_OK && j->sub.nTrace == 1 && (k = same_process(r, &j->sub.aTrace[0])) >= 0) {
            /* another trace of a process already read: said once, counted once */
            int nBefore = r->aTrace[k].f.nNote;
            vt__read_note(&r->aTrace[k].f, "%s is a trace of this same process (host, pid and start time alike): "
                          "analyzed and counted once, from %s", j->zPath, r->aTrace[k].f.zPath);
            once(r, k, nBefore);
            vt__result_free(&j->sub);
            continue;
        }
        if (j->rc == VT_EXIT_OK && merge_job(r, j) == 0) continue;
        if (j->rc == VT_EXIT_OK) { /* named on stderr already otherwise */
            vt__errorf("%s: out of memory", j->zPath);
            j->rc = VT_EXIT_INTERNAL;
            vt__result_free(&j->sub);
        }
        r->azFailed[r->nFailed++] = azPath[i];
        if (rcFirst == VT_EXIT_OK) rcFirst = j->rc;
    }
    free(p.aJob);
    if (vt__findings_group(r) != 0) {
        vt__errorf("analyze: out of memory while grouping findings");
        return VT_EXIT_INTERNAL;
    }
    vt__findings_sort(r);
    if (r->nFailed == 0) return VT_EXIT_OK;
    return r->nTrace > 0 ? VT_EXIT_PARTIAL : rcFirst;
}

int vt__analyze_read(struct vt_tracefile *f, const struct vt_opts *o, struct vt_result *r)
{
    struct vt_tracefile *pF;
    int64_t origin = f->fig.origin, shift = f->fig.shift;
    int bWall = f->fig.bWall, rc;
    memset(r, 0, sizeof *r);
    r->pOpts = o;
    if (vt__phase_check_opts(o) != VT_EXIT_OK) return VT_EXIT_USAGE;
    r->aTrace = calloc(1, sizeof *r->aTrace);
    if (!r->aTrace) {
        vt__errorf("%s: out of memory", f->zPath);
        return VT_EXIT_INTERNAL;
    }
    r->aTrace[0].f = *f; /* lent: the analysis works on it where it is, and hands it back below */
    pF = &r->aTrace[0].f;
    vt__figures_origin(&pF, 1); /* the origin of this trace read alone, as vt__analyze takes it */
    rc = analyze_one(r, 0, f->zPath, o);
    if (rc == VT_EXIT_OK) r->nTrace = 1;
    if (rc == VT_EXIT_OK && vt__findings_group(r) != 0) {
        vt__errorf("analyze: out of memory while grouping findings");
        rc = VT_EXIT_INTERNAL;
    }
    if (rc == VT_EXIT_OK) vt__findings_sort(r);
    *f = *pF; /* the caller's again, with the time origin it had */
    memset(pF, 0, sizeof *pF);
    f->fig.origin = origin, f->fig.shift = shift, f->fig.bWall = bWall;
    vt__read_note_partial(f);
    if (rc != VT_EXIT_OK) { /* nothing of a partial analysis is kept */
        findings_drop(r, 0);
        vt__trace_free(&r->aTrace[0]);
        vt__result_free(r);
    }
    return rc;
}
