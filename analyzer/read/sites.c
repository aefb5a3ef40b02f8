/* Call sites: a recorded stack as the line a person should look at, deduplicated into a table. */
#include "read.h"

#include <ctype.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/text.h"
#include "vramtrace/schema.h"

/* Does path z contain part (written with '/') with either separator ('\\' on Windows)? */
static int has_part(const char *z, const char *zPart)
{
    size_t n = strlen(zPart);
    for (; *z; z++) {
        size_t i = 0;
        while (i < n && z[i] && (z[i] == zPart[i] || (zPart[i] == '/' && z[i] == '\\'))) i++;
        if (i == n) return 1;
    }
    return 0;
}

/* Is a Python file path library code (torch, site-packages, the interpreter), '/' or '\\' separated? */
static int is_library_file(const char *z)
{
    return has_part(z, "site-packages/") || has_part(z, "dist-packages/") || has_part(z, "/torch/") ||
           (!strncmp(z, "torch", 5) && (z[5] == '/' || z[5] == '\\')) || strstr(z, "<frozen") ||
           has_part(z, "/lib/python3") || strstr(z, "\\Lib\\");
}

/*
 * Is a Python file code generated at run time rather than written by a person: Inductor's
 * modules (torchinductor_<user>/ in the temporary folder, '/' or '\\'), FX graph modules
 * (<eval_with_key>.N)?
 */
static int is_generated_file(const char *z)
{
    return has_part(z, "torchinductor_") || !strncmp(z, "<eval_with_key", 14);
}

/* Is a Python file the compiler's own (Dynamo, Inductor), which runs generated code? */
static int is_compiler_file(const char *z)
{
    return has_part(z, "torch/_dynamo/") || has_part(z, "torch/_inductor/");
}

/* Is a native module a runtime library (PyTorch, Python, C/C++ runtime) rather than the program? */
static int is_library_module(const char *z)
{
    static const char *az[] = {"libc10", "libtorch", "libpython", "libc.so", "libstdc++", "libnccl",
                               "libcublas", "libcudnn", "ld-linux"};
    if (!z) return 0;
    for (size_t i = 0; i < sizeof az / sizeof az[0]; i++)
        if (strstr(z, az[i])) return 1;
    return 0;
}

/*
 * Is a native function PyTorch's, the C++ runtime's or the thread machinery's (its module unknown, as
 * in snapshots)? Demangled names by their outer namespace (after a return type: "void at::native::f"),
 * mangled ones by their prefix, C functions by name.
 */
static int is_library_symbol(const char *zFn)
{
    static const char *azNs[] = {"c10", "at", "torch", "std", "pybind11", "caffe2", "c10d", "__gnu_cxx"};
    static const char *azPrefix[] = {"_ZN3c10", "_ZN2at", "_ZN5torch", "_ZNSt", "_ZNKSt", "_ZN8pybind11", "pthread_",
                                     "execute_native_thread_routine", "start_thread", "__clone", "clone",
                                     "__libc_start", "_start"};
    const char *zColon, *zId;
    if (!zFn) return 0;
    for (size_t i = 0; i < sizeof azPrefix / sizeof azPrefix[0]; i++)
        if (!strncmp(zFn, azPrefix[i], strlen(azPrefix[i]))) return 1;
    if (!(zColon = strstr(zFn, "::")) || memchr(zFn, '(', (size_t)(zColon - zFn))) return 0;
    for (zId = zColon; zId > zFn && (isalnum((unsigned char)zId[-1]) || zId[-1] == '_'); zId--) {
    }
    for (size_t i = 0; i < sizeof azNs / sizeof azNs[0]; i++)
        if (strlen(azNs[i]) == (size_t)(zColon - zId) && !strncmp(zId, azNs[i], (size_t)(zColon - zId))) return 1;
    return 0;
}

/* Is a native frame library code: by its module when recorded, else by its function's namespace? */
static int is_library_native(const char *zMod, const char *zFn)
{
    return zMod ? is_library_module(zMod) : is_library_symbol(zFn);
}

/*
 * The name that follows scope zScope in native function zFn, demangled ("at::_ops::bmm::call")
 * or mangled (zMangled then its length: "_ZN2at4_ops3bmm4callE..."), into z (size n): 1 when found.
 */
static int scoped_name(const char *zFn, const char *zScope, const char *zMangled, char *z, size_t n)
{
    const char *p, *zName;
    size_t len = 0;
    if (!zFn) return 0;
    if ((p = strstr(zFn, zScope)) != NULL) {
        zName = p + strlen(zScope);
        while (zName[len] && zName[len] != ':' && zName[len] != '<' && zName[len] != '(') len++;
    } else if ((p = strstr(zFn, zMangled)) != NULL) {
        char *zEnd;
        len = strtoul(p + strlen(zMangled), &zEnd, 10);
        zName = zEnd;
        if (strnlen(zName, len) < len) return 0;
    } else {
        return 0;
    }
    if (len == 0 || len >= n) return 0;
    memcpy(z, zName, len);
    z[len] = 0;
    return 1;
}

/* The PyTorch operator a native frame dispatches (at::_ops::bmm::call), or names as a profiler does (aten::bmm),
 * into z: 1 when found. */
static int torch_op(const char *zFn, char *z, size_t n)
{
    if (vt__torch_op_name(zFn) && strlen(zFn) < n) {
        memcpy(z, zFn, strlen(zFn) + 1);
        return 1;
    }
    return scoped_name(zFn, "at::_ops::", "_ZN2at4_ops", z, n);
}

/*
 * The autograd node a native frame runs (torch::autograd::generated::DivBackward0::apply) into z:
 * 1 when found, else 0 with z empty (the derivative formulas in generated::details:: are no node).
 */
static int autograd_node(const char *zFn, char *z, size_t n)
{
    if (scoped_name(zFn, "torch::autograd::generated::", "_ZN5torch8autograd9generated", z, n) &&
        strstr(z, "Backward") != NULL)
        return 1;
    if (vt__torch_node_name(zFn) && strlen(zFn) < n) { /* as a profiler names it: SumBackward0 */
        memcpy(z, zFn, strlen(zFn) + 1);
        return 1;
    }
    z[0] = 0;
    return 0;
}

/* A stack's frames, innermost first: kind, function, file, line, module, pc, and the module's recorded build id
 * (zBuildId: traces before schema version 3 have no module table), in the trace attached as schema %w (each %w of the
 * statement takes the schema name: sqlite3_mprintf) */
#define SITE_FRAME_SQL(zBuildId)                                                                                       \
    "SELECT f.kind, fn.value, fi.value, f.line, mo.value, f.pc, " zBuildId " FROM \"%w\".frame f"                     \
    " LEFT JOIN \"%w\".string fn ON fn.id = f.function_id LEFT JOIN \"%w\".string fi ON fi.id = f.file_id"           \
    " LEFT JOIN \"%w\".string mo ON mo.id = f.module_id WHERE f.stack_id = ? ORDER BY f.idx"

/* Is z's file name (after the last separator) zName, or does it end with "/zName" ('/' or '\\')? */
static int file_is(const char *z, const char *zName)
{
    size_t n = strlen(z), k = strlen(zName);
    return n >= k && !strcmp(z + n - k, zName) && (n == k || z[n - k - 1] == '/' || z[n - k - 1] == '\\');
}

/* Is Python function zFn (a plain or qualified name, "Module._apply", "_apply") named zName? */
static int fn_is(const char *zFn, const char *zName)
{
    size_t n = strlen(zFn), k = strlen(zName);
    return n >= k && !strcmp(zFn + n - k, zName) && (n == k || zFn[n - k - 1] == '.');
}

/* Does z contain zPart, ignoring case? */
static int has_nocase(const char *z, const char *zPart)
{
    size_t n = strlen(zPart);
    for (; *z; z++)
        if (!strncasecmp(z, zPart, n)) return 1;
    return 0;
}

/* Is native module zMod (a path) a runtime the program runs on rather than a library that owns memory? */
static int is_runtime_module(const char *zMod)
{
    static const char *az[] = {"libc10", "libtorch", "libpython", "libc.so", "libc-", "libstdc++", "ld-linux", "libcuda.",
                               "libcudart", "libcupti", "libvramtrace", "libpthread", "libgcc", "libm.so", "libdl"};
    for (size_t i = 0; i < sizeof az / sizeof az[0]; i++)
        if (strstr(zMod, az[i])) return 1;
    return 0;
}

/*
 * Add what one frame says to *p (docs/analysis.md "What the peak was" lists the frames): kind
 * (VT_FRAME_*), function, file (Python) and module (native) as recorded, any of them NULL.
 */
static void frame_facets(int kind, const char *zFn, const char *zFile, const char *zMod, struct vt_facets *p)
{
    if (kind == VT_FRAME_PYTHON) {
        p->m |= VT_FACET_PYTHON;
        if (!zFile) return;
        if (file_is(zFile, "torch/optim/optimizer.py") && zFn &&
            (fn_is(zFn, "wrapper") || fn_is(zFn, "_use_grad") || fn_is(zFn, "profile_hook_step")))
            p->m |= VT_FACET_OPTIM_WRAP; /* Optimizer.step's wrapper: it runs any subclass's step, the program's too */
        else if (has_part(zFile, "torch/optim/") || has_part(zFile, "apex/optimizers/") || has_part(zFile, "bitsandbytes/optim/") ||
            has_part(zFile, "deepspeed/ops/adam/") || has_part(zFile, "deepspeed/ops/lamb/") || has_part(zFile, "timm/optim/") ||
            file_is(zFile, "transformers/optimization.py"))
            p->m |= zFn && strstr(zFn, "zero_grad") ? VT_FACET_ZERO_GRAD : VT_FACET_OPTIM;
        else if (zFn && fn_is(zFn, "zero_grad"))
            p->m |= VT_FACET_ZERO_GRAD;
        if (has_part(zFile, "torch/nn/modules/module.py") && zFn &&
            (fn_is(zFn, "_apply") || fn_is(zFn, "to") || fn_is(zFn, "cuda") || fn_is(zFn, "convert") ||
             fn_is(zFn, "to_empty") || fn_is(zFn, "_load_from_state_dict") || fn_is(zFn, "load_state_dict")))
            p->m |= VT_FACET_PARAM;
        if (file_is(zFile, "torch/nn/init.py") || file_is(zFile, "torch/nn/parameter.py") ||
            file_is(zFile, "torch/serialization.py") || has_part(zFile, "safetensors/") ||
            (zFn && (fn_is(zFn, "reset_parameters") || fn_is(zFn, "set_module_tensor_to_device"))))
            p->m |= VT_FACET_PARAM;
        if (zFn && fn_is(zFn, "__init__")) p->m |= VT_FACET_INIT;
        if (has_part(zFile, "torch/nn/parallel/distributed.py") && zFn &&
            (strstr(zFn, "__init__") || strstr(zFn, "_ddp_init_helper") || strstr(zFn, "bucket")))
            p->m |= VT_FACET_REDUCER; /* DDP made its gradient buckets */
        if (has_part(zFile, "torch/cuda/graphs.py") || file_is(zFile, "cudagraph_trees.py")) p->m |= VT_FACET_GRAPH;
        if (zFn && ((file_is(zFile, "torch/_tensor.py") && fn_is(zFn, "backward")) ||
                    (file_is(zFile, "torch/autograd/__init__.py") && fn_is(zFn, "backward")) ||
                    (file_is(zFile, "torch/autograd/graph.py") && fn_is(zFn, "_engine_run_backward"))))
            p->m |= VT_FACET_ENGINE;
        return;
    }
    if (zMod) {
        const char *zBase = strrchr(zMod, '/');
        zBase = zBase ? zBase + 1 : zMod;
        if (strstr(zBase, "libnccl")) p->m |= VT_FACET_NCCL;
        else if (strstr(zBase, "libcublas")) p->m |= VT_FACET_CUBLAS;
        else if (strstr(zBase, "libcudnn")) p->m |= VT_FACET_CUDNN;
        else if (!p->zOwner[0] && strstr(zBase, ".so") && !is_runtime_module(zMod))
            snprintf(p->zOwner, sizeof p->zOwner, "%s", zBase); /* the innermost library that is not the runtime */
    }
    if (!zFn) return;
    if (!strncmp(zFn, "nccl", 4) || !strncmp(zFn, "pnccl", 5)) p->m |= VT_FACET_NCCL;
    if (strstr(zFn, "CUDABlas") || strstr(zFn, "cublas")) p->m |= VT_FACET_CUBLAS;
    if ((has_nocase(zFn, "cudnn") && strstr(zFn, "orkspace")) || strstr(zFn, "run_conv_plan") ||
        strstr(zFn, "Workspace::Workspace") || strstr(zFn, "9WorkspaceC"))
        p->m |= VT_FACET_CUDNN;
    if (strstr(zFn, "CUDAGraph")) p->m |= VT_FACET_GRAPH;
    if (strstr(zFn, "CUDACachingAllocator") || strstr(zFn, "CudaMallocAsync") || strstr(zFn, "CUDAAllocator"))
        p->m |= VT_FACET_ALLOCATOR;
    if (strstr(zFn, "Engine::thread_main") || strstr(zFn, "Engine11thread_main") ||
        strstr(zFn, "Engine::evaluate_function") || strstr(zFn, "Engine17evaluate_function"))
        p->m |= VT_FACET_ENGINE;
    if (strstr(zFn, "AccumulateGrad")) p->m |= VT_FACET_ACCUMULATE | VT_FACET_ENGINE;
    if (strstr(zFn, "c10d::Reducer") || strstr(zFn, "c10d7Reducer")) p->m |= VT_FACET_REDUCER;
    {
        char zNode[128];
        if (autograd_node(zFn, zNode, sizeof zNode)) p->m |= VT_FACET_ENGINE;
    }
}

/* The library facet, once every frame is seen: a library owns the memory only when PyTorch's allocator did not make it. */
static void facets_done(struct vt_facets *p)
{
    if ((p->m & VT_FACET_OPTIM_WRAP) && !(p->m & VT_FACET_OPTIM)) /* the step of an optimizer the program defines */
        p->m |= VT_FACET_OPTIM | VT_FACET_OPTIM_OWN;
    p->m &= ~(unsigned)VT_FACET_OPTIM_WRAP;
    if (p->zOwner[0] && !(p->m & (VT_FACET_ALLOCATOR | VT_FACET_NCCL | VT_FACET_CUBLAS | VT_FACET_CUDNN)))
        p->m |= VT_FACET_LIB;
    else
        p->zOwner[0] = 0;
}

int vt__stack_facets(sqlite3 *db, int64_t stackId, struct vt_facets *p)
{
    sqlite3_stmt *pStmt = NULL;
    char *zSql;
    int rc;
    memset(p, 0, sizeof *p);
    if (stackId < 0) return SQLITE_OK;
    zSql = sqlite3_mprintf(SITE_FRAME_SQL("NULL"), "main", "main", "main", "main");
    rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL) : SQLITE_NOMEM;
    sqlite3_free(zSql);
    if (rc == SQLITE_OK) sqlite3_bind_int64(pStmt, 1, stackId);
    while (rc == SQLITE_OK && (rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
        rc = SQLITE_OK;
        frame_facets(sqlite3_column_int(pStmt, 0), (const char *)sqlite3_column_text(pStmt, 1),
                     (const char *)sqlite3_column_text(pStmt, 2), (const char *)sqlite3_column_text(pStmt, 4), p);
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
    sqlite3_finalize(pStmt);
    facets_done(p);
    return rc;
}

/*
 * Describe a stack (*pbNccl set when a native frame is in NCCL): the top Python frame outside
 * library and generated code as "file:line in function", else the top generated module without
 * its line (every line of one generated module is one site), else the top Python frame, else
 * the autograd node of a backward-pass allocation (no Python frame on the engine's thread; with
 * the operator inside it where a profiler named both: "aten::mm in MmBackward0"), else the top
 * native frame outside library code, else the PyTorch operator that allocated (at::_ops::, or a
 * profiler's name such as aten::empty). Under
 * generated code (torch.compile, FX) the user's frame is the one that called it, marked "(via
 * generated code)": a user frame that Dynamo's own frames call is the compiled function itself
 * and is passed over. Returns a malloc'd string, or NULL on OOM / SQLite error (*pRc set).
 */
static char *describe_stack(sqlite3 *db, const char *zSchema, int64_t stackId, int *pRc, int *pbNccl)
{
    sqlite3_stmt *pStmt = NULL;
    char *zPy = NULL, *zPyAny = NULL, *zGen = NULL, *zPending = NULL, *zNative = NULL, *zRet = NULL;
    char zNode[128] = "", zOp[128] = "";
    int bNativeLib = 0, bUnderGen = 0, bEngine = 0;
    const char *zS = zSchema ? zSchema : "main";
    char *zSql = sqlite3_mprintf(SITE_FRAME_SQL("(SELECT build_id FROM \"%w\".module WHERE path_id = f.module_id)"), zS,
                                 zS, zS, zS, zS);
    int rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL) : SQLITE_NOMEM;
    sqlite3_free(zSql);
    if (rc != SQLITE_OK && rc != SQLITE_NOMEM) {
        zSql = sqlite3_mprintf(SITE_FRAME_SQL("NULL"), zS, zS, zS, zS);
        rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL) : SQLITE_NOMEM;
        sqlite3_free(zSql);
    }
    if (rc != SQLITE_OK) goto done;
    sqlite3_bind_int64(pStmt, 1, stackId);
    while ((rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
        int kind = sqlite3_column_int(pStmt, 0);
        const char *zFn = (const char *)sqlite3_column_text(pStmt, 1);
        const char *zFile = (const char *)sqlite3_column_text(pStmt, 2);
        int line = sqlite3_column_int(pStmt, 3);
        const char *zMod = (const char *)sqlite3_column_text(pStmt, 4);
        if (kind != 1 && zMod && strstr(zMod, "libnccl")) *pbNccl = 1;
        if (kind != 1 && zFn && (strstr(zFn, "torch::autograd::Engine::thread_main") ||
                                 strstr(zFn, "_ZN5torch8autograd6Engine11thread_main")))
            bEngine = 1; /* the autograd engine's thread: the backward pass */
        if (kind == 1 /* VT_FRAME_PYTHON */) {
            int bGen = zFile && is_generated_file(zFile), bLib = !zFile || is_library_file(zFile), bUser = !bGen && !bLib;
            char *z;
            if (zPy) continue;
            if (zPending && zFile && has_part(zFile, "torch/_dynamo/")) { /* it was the function Dynamo compiled */
                free(zPending);
                zPending = NULL;
            } else if (zPending && bUser) { /* it called the compiled code */
                zPy = zPending;
                zPending = NULL;
                continue;
            }
            if (bGen && !zGen) {
                zGen = vt__strdupf("%s (generated code, all its lines)", zFile);
                if (!zGen) { rc = SQLITE_NOMEM; goto done; }
            }
            bUnderGen |= bGen || (zFile && is_compiler_file(zFile));
            z = bUser && bUnderGen ? vt__strdupf("%s:%d in %s (via generated code)", zFile, line, zFn ? zFn : "?")
                                   : vt__strdupf("%s:%d in %s", zFile ? zFile : "?", line, zFn ? zFn : "?");
            if (!z) { rc = SQLITE_NOMEM; goto done; }
            if (bUser && bUnderGen) free(zPending), zPending = z; /* the caller, unless Dynamo called it */
            else if (bUser) zPy = z;
            else if (!zPyAny) zPyAny = z;
            else free(z);
        } else if (!zNode[0] && autograd_node(zFn, zNode, sizeof zNode)) {
            continue;
        } else if (!zOp[0] && torch_op(zFn, zOp, sizeof zOp)) {
            continue;
        } else if (!bEngine && (!zNative || (bNativeLib && !is_library_native(zMod, zFn)))) {
            /* (outside the autograd engine's thread_main: what starts the thread, libc's and the
             * C++ runtime's frames, often misnamed by the unwinder, is no call site) */
            const char *zBase = zMod ? strrchr(zMod, '/') : NULL;
            struct vt_symbol sy;
            int sr = VT_SYM_UNKNOWN;
            free(zNative);
            bNativeLib = is_library_native(zMod, zFn);
            zBase = zBase ? zBase + 1 : zMod;
            /* not resolved when recorded: symbolized now from the module file, unless it changed since */
            if (!(zFn && zFile && line > 0) && sqlite3_column_type(pStmt, 5) != SQLITE_NULL)
                sr = vt__sym_resolve(zMod, (const char *)sqlite3_column_text(pStmt, 6),
                                     (uint64_t)sqlite3_column_int64(pStmt, 5), &sy);
            if (sr < 0) { rc = SQLITE_NOMEM; goto done; }
            if (sr == VT_SYM_OK && sy.zFile && sy.line > 0)
                zNative = vt__strdupf("%s:%d in %s", sy.zFile, sy.line, sy.zFunction ? sy.zFunction : zFn ? zFn : "?");
            else if (sr == VT_SYM_OK && !zFn)
                zNative = vt__strdupf("%s (%s)", sy.zFunction, zBase ? zBase : "?");
            else if (sr == VT_SYM_MISMATCH)
                zNative = vt__strdupf("%s%s0x%llx (%s: not the recorded build, not symbolized)", zFn ? zFn : "",
                                      zFn ? " " : "", (unsigned long long)sqlite3_column_int64(pStmt, 5),
                                      zBase ? zBase : "?");
            else if (zFn && zFile && line > 0)
                zNative = vt__strdupf("%s:%d in %s", zFile, line, zFn);
            else if (zFn)
                zNative = vt__strdupf("%s (%s)", zFn, zBase ? zBase : "?");
            else
                zNative = vt__strdupf("0x%llx (%s)", (unsigned long long)sqlite3_column_int64(pStmt, 5),
                                      zBase ? zBase : "?");
            if (!zNative) { rc = SQLITE_NOMEM; goto done; }
        }
    }
    if (rc != SQLITE_DONE) goto done;
    rc = SQLITE_OK;
    if (!zPy) zPy = zPending, zPending = NULL;
    if (zPy) { zRet = zPy; zPy = NULL; }
    else if (zGen) { zRet = zGen; zGen = NULL; }
    else if (zPyAny) { zRet = zPyAny; zPyAny = NULL; }
    else if (zNode[0] && zOp[0] && vt__torch_op_name(zOp) && (!zNative || bNativeLib)) /* a profiler's operators */
        zRet = vt__strdupf("%s in %s (backward pass: autograd thread, no Python frame)", zOp, zNode);
    else if (zNode[0] && (!zNative || bNativeLib))
        zRet = vt__strdupf("%s (backward pass: autograd thread, no Python frame)", zNode);
    else if (zOp[0] && (!zNative || bNativeLib) && bEngine)
        zRet = vt__strdupf("%s (backward pass: autograd thread, no Python frame)", zOp);
    else if (zOp[0] && (!zNative || bNativeLib))
        zRet = vt__strdupf("torch operator %s (no Python frame recorded)", zOp);
    else if (zNative) { zRet = zNative; zNative = NULL; }
    else zRet = vt__strdupf("stack %lld (no frames recorded)", (long long)stackId);
    if (!zRet) rc = SQLITE_NOMEM;
done:
    free(zPy);
    free(zPyAny);
    free(zGen);
    free(zPending);
    free(zNative);
    sqlite3_finalize(pStmt);
    *pRc = rc;
    return zRet;
}

char *vt__stack_describe(sqlite3 *db, int64_t stackId, int *pRc)
{
    int bNccl = 0;
    return describe_stack(db, NULL, stackId, pRc, &bNccl);
}

/* vt_site(schema, stack_id): vt__stack_describe of a stack of the trace attached as schema. */
static void site_function(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    int rc = SQLITE_OK, bNccl = 0;
    char *z;
    (void)argc;
    if (sqlite3_value_type(argv[1]) != SQLITE_INTEGER) return; /* no stack: NULL */
    z = describe_stack(sqlite3_context_db_handle(ctx), (const char *)sqlite3_value_text(argv[0]),
                       sqlite3_value_int64(argv[1]), &rc, &bNccl);
    if (z) sqlite3_result_text(ctx, z, -1, free);
    else if (rc == SQLITE_NOMEM) sqlite3_result_error_nomem(ctx);
    else sqlite3_result_error(ctx, "cannot read the stack's frames", -1);
}

int vt__site_function(sqlite3 *db)
{
    return sqlite3_create_function(db, "vt_site", 2, SQLITE_UTF8 | SQLITE_INNOCUOUS, NULL, site_function, NULL, NULL);
}

/* Slot of a 64-bit key in a table of nHash (a power of two) slots. */
static int key_slot(int64_t key, int nHash)
{
    return (int)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> 40) & (nHash - 1);
}

/* Slot of a description in a table of nHash (a power of two) slots (FNV-1a). */
static int name_slot(const char *z, int nHash)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *z; z++) h = (h ^ (unsigned char)*z) * 0x100000001b3ull;
    return (int)(h >> 20) & (nHash - 1);
}

/* Room for one more key and one more site in the hash tables (grown at half full). 0, or -1 on OOM. */
static int tables_grow(struct vt_sites *ss)
{
    if (ss->nKeyHash == 0 || (ss->nKey + 1) * 2 > ss->nKeyHash) {
        int nNew = ss->nKeyHash ? ss->nKeyHash * 2 : 256;
        struct vt_sitekey *aNew = malloc(sizeof *aNew * (size_t)nNew);
        if (!aNew) return -1;
        for (int i = 0; i < nNew; i++) aNew[i].site = -1;
        for (int i = 0; i < ss->nKeyHash; i++) {
            if (ss->aKey[i].site < 0) continue;
            int j = key_slot(ss->aKey[i].key, nNew);
            while (aNew[j].site >= 0) j = (j + 1) & (nNew - 1);
            aNew[j] = ss->aKey[i];
        }
        free(ss->aKey);
        ss->aKey = aNew;
        ss->nKeyHash = nNew;
    }
    if (ss->nNameHash == 0 || (ss->n + 1) * 2 > ss->nNameHash) {
        int nNew = ss->nNameHash ? ss->nNameHash * 2 : 256;
        int *aNew = malloc(sizeof(int) * (size_t)nNew);
        if (!aNew) return -1;
        for (int i = 0; i < nNew; i++) aNew[i] = -1;
        for (int i = 0; i < ss->n; i++) {
            if (ss->a[i].stackId < 0) continue; /* size classes are never merged */
            int j = name_slot(ss->a[i].zSite, nNew);
            while (aNew[j] >= 0) j = (j + 1) & (nNew - 1);
            aNew[j] = i;
        }
        free(ss->aName);
        ss->aName = aNew;
        ss->nNameHash = nNew;
    }
    if (ss->n == ss->nAlloc) {
        int nNew = ss->nAlloc ? ss->nAlloc * 2 : 64;
        struct vt_site *aNew = realloc(ss->a, sizeof *aNew * (size_t)nNew);
        if (!aNew) return -1;
        ss->a = aNew;
        ss->nAlloc = nNew;
    }
    return 0;
}

int vt__site_get(struct vt_sites *ss, sqlite3 *db, int64_t stackId, int64_t bytes)
{
    int64_t key = stackId >= 0 ? stackId : -bytes - 1;
    int i, j, rc = SQLITE_OK, bNccl = 0, iSite;
    char *zSite;

    if (ss->nKeyHash > 0) {
        for (i = key_slot(key, ss->nKeyHash); ss->aKey[i].site >= 0; i = (i + 1) & (ss->nKeyHash - 1))
            if (ss->aKey[i].key == key) return ss->aKey[i].site;
    }
    if (tables_grow(ss) != 0) return -1;
    if (stackId >= 0) {
        zSite = describe_stack(db, NULL, stackId, &rc, &bNccl);
        if (rc != SQLITE_OK) {
            ss->rcErr = rc; /* the caller tells damage (no frame table) from memory */
            snprintf(ss->zErr, sizeof ss->zErr, "%s", sqlite3_errmsg(db));
            return -1;
        }
    } else {
        char zB[32];
        vt__fmt_bytes(bytes, zB, sizeof zB);
        zSite = vt__strdupf("site not recorded (allocations of %s)", zB);
        if (!zSite) return -1;
    }
    for (j = name_slot(zSite, ss->nNameHash); ss->aName[j] >= 0; j = (j + 1) & (ss->nNameHash - 1))
        if (!strcmp(ss->a[ss->aName[j]].zSite, zSite) && ss->a[ss->aName[j]].bNccl == bNccl) break;
    iSite = stackId >= 0 ? ss->aName[j] : -1; /* a size class (no stack) is a site of its own */
    if (iSite >= 0) { /* described like a site seen before (NCCL's buffers kept apart): one line for a person */
        free(zSite);
    } else {
        struct vt_site *s = &ss->a[ss->n];
        memset(s, 0, sizeof *s);
        s->key = key;
        s->stackId = stackId;
        s->bNccl = bNccl;
        s->zSite = zSite;
        iSite = ss->n++;
        if (stackId >= 0) ss->aName[j] = iSite;
    }
    for (i = key_slot(key, ss->nKeyHash); ss->aKey[i].site >= 0;) i = (i + 1) & (ss->nKeyHash - 1);
    ss->aKey[i].key = key;
    ss->aKey[i].site = iSite;
    ss->nKey++;
    return iSite;
}

void vt__sites_free(struct vt_sites *s)
{
    for (int i = 0; i < s->n; i++) free(s->a[i].zSite);
    free(s->a);
    free(s->aKey);
    free(s->aName);
    memset(s, 0, sizeof *s);
}

/*
 * Whether a Python frame of stack stackId outside the installed libraries (not under site-packages,
 * dist-packages or the interpreter's lib/python) is in a function re matches: the user's caller of a
 * model whose own frame is the innermost user line (evaluate() calling model.forward).
 */
int vt__stack_user_func_matches(sqlite3 *db, int64_t stackId, const regex_t *re)
{
    sqlite3_stmt *p = NULL;
    int bHit = 0;
    if (!db || stackId < 0 ||
        sqlite3_prepare_v2(db,
                           "SELECT fn.value, fi.value FROM frame f LEFT JOIN string fn ON fn.id = f.function_id "
                           "LEFT JOIN string fi ON fi.id = f.file_id WHERE f.stack_id = ? AND f.kind = 1 ORDER BY f.idx",
                           -1, &p, NULL) != SQLITE_OK) {
        sqlite3_finalize(p);
        return 0;
    }
    sqlite3_bind_int64(p, 1, stackId);
    while (!bHit && sqlite3_step(p) == SQLITE_ROW) {
        const char *zFn = (const char *)sqlite3_column_text(p, 0), *zFile = (const char *)sqlite3_column_text(p, 1);
        if (!zFn || !zFile || strstr(zFile, "site-packages") || strstr(zFile, "dist-packages") ||
            strstr(zFile, "lib/python") || strstr(zFile, "Lib\\"))
            continue;
        bHit = regexec(re, zFn, 0, NULL, 0) == 0;
    }
    sqlite3_finalize(p);
    return bHit;
}

/*
 * The Python frames of stack stackId in the program's own code (not library or generated code), innermost
 * first, each "file:line in function" as sites name them, one per line into z (size n; a frame that does not
 * fit is left out): "" when none. Returns an SQLite code.
 */
int vt__stack_user_frames(sqlite3 *db, int64_t stackId, char *z, size_t n)
{
    sqlite3_stmt *pStmt = NULL;
    char *zSql = sqlite3_mprintf(SITE_FRAME_SQL("NULL"), "main", "main", "main", "main");
    size_t used = 0;
    int rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL) : SQLITE_NOMEM;
    sqlite3_free(zSql);
    if (n) z[0] = 0;
    if (rc != SQLITE_OK) goto done;
    sqlite3_bind_int64(pStmt, 1, stackId);
    while ((rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
        const char *zFn = (const char *)sqlite3_column_text(pStmt, 1), *zFile = (const char *)sqlite3_column_text(pStmt, 2);
        int k;
        if (sqlite3_column_int(pStmt, 0) != 1 /* VT_FRAME_PYTHON */ || !zFile || is_library_file(zFile) ||
            is_generated_file(zFile))
            continue;
        k = snprintf(z + used, n - used, "%s:%d in %s\n", zFile, sqlite3_column_int(pStmt, 3), zFn ? zFn : "?");
        if (k > 0 && (size_t)k < n - used) used += (size_t)k;
        else z[used] = 0;
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
done:
    sqlite3_finalize(pStmt);
    return rc;
}
