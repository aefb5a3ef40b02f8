/* Writes tests/data/example-train.db: a PyTorch training job as the tracer records it, with one planted problem. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "accuracy/jobsim.h"
#include "accuracy/pt.h"
#include "vramtrace/demangle.h"

/*
 * The job (tests/accuracy/jobsim.c and pt.c write it row for row as libvramtrace.so would on
 * an eager PyTorch process: api_call rows with correlation ids, the caching allocator's
 * cudaMalloc segments, the cuBLAS workspace, Python frames over native ones, buffer_use rows
 * of kernels and copies, the DataLoader's pinned blocks, mangled kernel names from a real step (Nsight capture), the GPU clock
 * behind the CPU's):
 *
 *   python train.py --epochs 2 --batch-size 32    (a ResNet-50, SGD with momentum, H100 80GB)
 *
 *   for epoch in range(2):                          # NVTX "epoch N"
 *       train_one_epoch(...)                        # NVTX "train" > "step N"
 *       validate(...)                               # NVTX "validation" > "step N"
 *
 * The planted problem, in validate(): it runs without torch.no_grad() and keeps every batch's
 * output in a list for an epoch-end metric (train.py:97 `outputs.append(model(x))`), so each
 * kept output holds its autograd graph, the batch's activations: live memory grows batch by
 * batch through validation and drops when the list is reassigned in the next epoch.
 * tests/check_example.py asserts what `vramtrace analyze` says about it.
 */

#define MAIN "train.py:160:main|train.py:171:<module>"
#define TRAIN(line) "train.py:" #line ":train_one_epoch|" MAIN
#define VAL(line) "train.py:" #line ":validate|train.py:162:main|train.py:171:<module>"

enum { EPOCHS = 2, STEPS = 8, VAL_STEPS = 6, BATCH = 32 };

/*
 * The kernel_name rows the tracer writes for the trace's kernel names (tracer/decode.c):
 * demangled with the C++ runtime's demangler, NULL forms where there is none; and the meta row
 * saying the trace is synthetic. 0 or -1.
 */
static int finish_trace(const char *zPath)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *pSel = NULL, *pStr = NULL, *pIns = NULL;
    int rc = sqlite3_open(zPath, &db);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "SELECT id, value FROM string WHERE id IN (SELECT name_id FROM kernel) ORDER BY id", -1,
                                &pSel, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(db, "INSERT INTO string(value) VALUES(?)", -1, &pStr, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(db, "INSERT INTO kernel_name VALUES(?, ?, ?)", -1, &pIns, NULL);
    while (rc == SQLITE_OK && sqlite3_step(pSel) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(pSel, 0), idDem = id, idShort = id;
        const char *zName = (const char *)sqlite3_column_text(pSel, 1);
        char *zDem = NULL, zShort[512];
        int r = vt__demangle(zName, VT_DEMANGLE_LOAD, &zDem);
        const char *zReadable = r == VT_DEMANGLE_OK ? zDem : r == VT_DEMANGLE_NOT ? zName : NULL;
        if (zDem) {
            sqlite3_bind_text(pStr, 1, zDem, -1, SQLITE_TRANSIENT);
            rc = sqlite3_step(pStr) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
            sqlite3_reset(pStr);
            idDem = idShort = sqlite3_last_insert_rowid(db);
        }
        if (rc == SQLITE_OK && zReadable && vt__short_name(zReadable, zShort, sizeof zShort) < sizeof zShort &&
            strcmp(zShort, zReadable) != 0) {
            sqlite3_bind_text(pStr, 1, zShort, -1, SQLITE_TRANSIENT);
            rc = sqlite3_step(pStr) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
            sqlite3_reset(pStr);
            idShort = sqlite3_last_insert_rowid(db);
        }
        sqlite3_bind_int64(pIns, 1, id);
        if (zReadable) sqlite3_bind_int64(pIns, 2, idDem), sqlite3_bind_int64(pIns, 3, idShort);
        else sqlite3_bind_null(pIns, 2), sqlite3_bind_null(pIns, 3);
        if (rc == SQLITE_OK) rc = sqlite3_step(pIns) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
        sqlite3_reset(pIns);
        free(zDem);
    }
    /* said in the trace itself: no GPU ran this */
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "INSERT OR REPLACE INTO meta VALUES('synthetic', '1: tests/make_example_trace.c')", NULL,
                          NULL, NULL);
    if (rc == SQLITE_OK && !vt__demangle_available(VT_DEMANGLE_LOAD))
        rc = sqlite3_exec(db, "INSERT INTO meta VALUES('kernel_names_demangled', '0: no __cxa_demangle in the process')",
                          NULL, NULL, NULL);
    sqlite3_finalize(pSel);
    sqlite3_finalize(pStr);
    sqlite3_finalize(pIns);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(db);
    return rc == SQLITE_OK ? 0 : -1;
}

/* The next batch, copied from the DataLoader's pinned memory (pin_memory=True: two blocks in turn). */
static int next_batch(struct js *j, int64_t xBytes, const char *zUser)
{
    static int aPin[2] = {-1, -1}, iNext;
    int site = js_site(j, "lib:torch/utils/data/_utils/pin_memory.py:90:pin_memory|"
                          "lib:torch/utils/data/_utils/pin_memory.py:58:_pin_memory_loop.<locals>.do_one_step|"
                          "lib:torch/utils/data/_utils/pin_memory.py:76:_pin_memory_loop|"
                          "std:threading.py:1012:Thread.run|std:threading.py:1032:Thread._bootstrap");
    int slot = iNext++ % 2;
    if (aPin[slot] >= 0) js_pin_free(j, aPin[slot]);
    aPin[slot] = js_pin_alloc(j, xBytes, site);
    return pt_batch(j, aPin[slot], xBytes, zUser);
}

/* One training step: batch, forward, backward, optimizer step, loss.item(). */
static void train_step(struct js *j, struct pt_model *m, int64_t xBytes, int *pLastX, int *pLastOut)
{
    struct pt_fwd f;
    int x;
    js_cpu(j, 4 * MS); /* the DataLoader's next batch */
    if (*pLastX >= 0) js_free(j, *pLastX); /* the previous step's batch and output, dropped on reassignment */
    if (*pLastOut >= 0) js_free(j, *pLastOut);
    pt_zero_grad(j, m, 1, TRAIN(58));
    x = next_batch(j, xBytes, TRAIN(60));
    f = pt_forward(j, m, x, BATCH, 1, 1, TRAIN(61));
    js_here(j, js_site(j, TRAIN(63)));
    pt_backward(j, m, &f, BATCH, NULL, 0);
    js_free(j, f.loss);
    pt_step(j, m, TRAIN(64));
    pt_item(j, f.out, TRAIN(66));
    *pLastX = x;
    *pLastOut = f.out;
}

int main(int argc, char **argv)
{
    const char *zOut = argc > 1 ? argv[1] : "example-train.db";
    const char *zKernels = argc > 2 ? argv[2] : VT_EXAMPLE_KERNELS;
    static struct pt_model m;
    static struct pt_fwd aKept[VAL_STEPS];
    struct js_cfg c;
    struct js *j;
    int64_t xBytes = (int64_t)BATCH * 3 * 224 * 224 * 4;
    int lastX = -1, lastOut = -1, nKept = 0;
    char zName[32];

    if (js_load_kernels(zKernels) != 0) return 1;
    remove(zOut);
    memset(&c, 0, sizeof c);
    c.zPath = zOut;
    c.mode = JS_SEGMENTS;
    c.rank = 0, c.world = 1; /* torchrun --nproc-per-node 1: RANK=0 */
    c.seed = 2024;
    c.zCmd = "python train.py --epochs 2 --batch-size 32";
    c.zTemplate = "nsys_mangled";
    c.kernelStride = 1;
    c.timeScale = 1;
    c.startWall = (int64_t)1767225600 * 1000000000; /* 2026-01-01 */
    j = js_open(&c);
    if (!j) return 1;
    pt_cnn(&m, 224, 1000);
    pt_shrink(&m, 3);
    pt_to_device(j, &m, "train.py:151:main|train.py:171:<module>");
    for (int e = 0; e < EPOCHS; e++) {
        snprintf(zName, sizeof zName, "epoch %d", e);
        js_push(j, zName);
        js_push(j, "train");
        for (int s = 0; s < STEPS; s++) {
            snprintf(zName, sizeof zName, "step %d", s);
            js_push(j, zName);
            train_step(j, &m, xBytes, &lastX, &lastOut);
            js_pop(j);
        }
        js_here(j, js_site(j, MAIN)); /* train_one_epoch returns: its locals go */
        js_free(j, lastX);
        js_free(j, lastOut);
        lastX = lastOut = -1;
        js_pop(j);
        /* `outputs = []` at the start of validate(): last epoch's kept outputs and their graphs go */
        js_here(j, js_site(j, VAL(91)));
        for (int k = 0; k < nKept; k++) {
            for (int l = 0; l < m.n; l++)
                if (aKept[k].saved[l] >= 0) js_free(j, aKept[k].saved[l]);
            js_free(j, aKept[k].out);
        }
        nKept = 0;
        js_push(j, "validation");
        for (int s = 0; s < VAL_STEPS; s++) {
            int x;
            snprintf(zName, sizeof zName, "step %d", s);
            js_push(j, zName);
            js_cpu(j, 2 * MS);
            x = next_batch(j, xBytes, VAL(95));
            /* no torch.no_grad(): the forward saves its activations for a backward that never comes */
            aKept[nKept] = pt_forward(j, &m, x, BATCH, 1, 0, VAL(97));
            pt_item(j, aKept[nKept].loss, VAL(98));
            js_here(j, js_site(j, VAL(98)));
            js_free(j, aKept[nKept].loss); /* loss.item() taken, the loss is reassigned next batch */
            nKept++; /* outputs.append(model(x)): the output, its loss and its graph stay */
            js_pop(j);
        }
        js_pop(j);
        js_pop(j);
    }
    js_sync(j);
    if (js_close(j, 1, 1) != 0 || finish_trace(zOut) != 0) {
        fprintf(stderr, "make_example_trace: writing %s failed\n", zOut);
        return 1;
    }
    printf("wrote %s\n", zOut);
    return 0;
}
