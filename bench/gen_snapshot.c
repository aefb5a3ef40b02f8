/* Writes a PyTorch memory snapshot pickle of a requested size, seeded, byte for byte as Python's pickler writes torch's. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The object graph is the one torch.cuda.memory._snapshot() returns with
 * _record_memory_history(stacks="all") on, and the bytes are the ones
 * pickle.dump(s, f) (protocol 4) writes for it: every dict, list, tuple and
 * string memoized at its first save and fetched again with BINGET/LONG_BINGET,
 * items in batches of 1000, 64 KiB frames committed at the start of a save, as
 * CPython's pickler does (tests/gen_snapshot_test.py re-dumps a generated file
 * with Python and compares the bytes). What torch shares, the file shares:
 *
 * - frame dicts {name, filename, line} are made once per distinct frame and
 *   shared by every traceback holding them (each with its own name and filename
 *   strings); a traceback is a new list per event, of Python and C++ frames
 *   interleaved, innermost first, the capture's own frames on top;
 * - free_completed shares its free_requested's list, an alloc the list of the
 *   segment_alloc just before it, and a block live at the dump the list of the
 *   alloc that made it (written in `segments`, which come first, and fetched by
 *   the event later);
 * - key and action strings are one object each.
 *
 * The events come from a caching allocator simulated per device: segments of
 * 2 MiB (small pool, requests up to 1 MiB) and of 20 MiB or the request rounded
 * to 2 MiB (large pool), blocks split first-fit and merged when freed;
 * parameters, optimizer state and gradients allocated once; each training step
 * allocates forward activations and temporaries, frees them in backward; the
 * cache is emptied every 50 steps (segment_free); one step in 97 runs out of
 * memory (segment_free of the cached segments, an `oom` event, the step's
 * activations freed). Every device writes its own list; times are microseconds
 * of the wall clock, strictly increasing per device. `segments` holds the state
 * at the end (live blocks active_allocated, free space inactive).
 *
 * The summary printed (stdout, or --summary FILE) says what was written, for
 * a test to compare with an import: events per action and device, segments and
 * live blocks at the dump, per device peak allocated and reserved bytes (every
 * event applied in its order: alloc + size, free_completed - size; segment_alloc
 * + size, segment_free - size), distinct tracebacks (frame sequences) written.
 */

/* ---- a splitmix64 generator: the same file for the same seed on every machine ---- */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A number in [0, n). */
static uint64_t rng_below(uint64_t *s, uint64_t n)
{
    return n ? rng_next(s) % n : 0;
}

/* ---- the pickle writer: Python's protocol 4 framing and memo ---- */

#define FRAME_TARGET 65536

struct pw {
    FILE *f;            /* NULL: count only */
    uint8_t *aFrame;    /* the frame being filled */
    size_t nFrame, nFrameAlloc;
    uint64_t nMemo;     /* memo entries so far (MEMOIZE numbers them) */
    uint64_t nBytes;    /* bytes written (or counted) */
    uint64_t aTiny[128]; /* memo index + 1 of "" and of each one-character ASCII string */
    int bErr;
};

static void pw_raw(struct pw *w, const void *p, size_t n)
{
    if (w->f && fwrite(p, 1, n, w->f) != n) w->bErr = 1;
    w->nBytes += n;
}

/* Append n bytes to the frame. */
static void put(struct pw *w, const void *p, size_t n)
{
    if (w->nFrame + n > w->nFrameAlloc) {
        size_t m = (w->nFrame + n) * 2;
        uint8_t *a = realloc(w->aFrame, m);
        if (!a) {
            w->bErr = 1;
            return;
        }
        w->aFrame = a;
        w->nFrameAlloc = m;
    }
    memcpy(w->aFrame + w->nFrame, p, n);
    w->nFrame += n;
}

static void put1(struct pw *w, int c)
{
    uint8_t b = (uint8_t)c;
    put(w, &b, 1);
}

/* n-byte little-endian v. */
static void put_le(struct pw *w, uint64_t v, int n)
{
    uint8_t b[8];
    for (int i = 0; i < n; i++) b[i] = (uint8_t)(v >> (8 * i));
    put(w, b, (size_t)n);
}

/* Write the frame out (FRAME and its length when it has 4 bytes or more, as pickle.py's framer). */
static void commit(struct pw *w, int bForce)
{
    if (w->nFrame == 0 || (!bForce && w->nFrame < FRAME_TARGET)) return;
    if (w->nFrame >= 4) {
        uint8_t h[9] = {0x95};
        for (int i = 0; i < 8; i++) h[1 + i] = (uint8_t)((uint64_t)w->nFrame >> (8 * i));
        pw_raw(w, h, sizeof h);
    }
    pw_raw(w, w->aFrame, w->nFrame);
    w->nFrame = 0;
}

/* The start of one save(): the pickler commits a full frame here. */
#define SAVE(w) commit((w), 0)

static void memoize(struct pw *w)
{
    put1(w, 0x94);
    w->nMemo++;
}

/* A memoized object saved again. */
static void v_get(struct pw *w, uint64_t i)
{
    SAVE(w);
    if (i < 256) {
        put1(w, 'h');
        put1(w, (int)i);
    } else {
        put1(w, 'j');
        put_le(w, i, 4);
    }
}

static void v_int(struct pw *w, int64_t v)
{
    SAVE(w);
    if (v >= 0 && v <= 0xff) {
        put1(w, 'K');
        put1(w, (int)v);
    } else if (v >= 0 && v <= 0xffff) {
        put1(w, 'M');
        put_le(w, (uint64_t)v, 2);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        put1(w, 'J');
        put_le(w, (uint64_t)v, 4);
    } else { /* LONG1: the fewest two's-complement bytes */
        int n = 1;
        while (n < 8 && !(v >= -(INT64_C(1) << (8 * n - 1)) && v < (INT64_C(1) << (8 * n - 1)))) n++;
        put1(w, 0x8a);
        put1(w, n);
        put_le(w, (uint64_t)v, n);
    }
}

static void v_bool(struct pw *w, int b)
{
    SAVE(w);
    put1(w, b ? 0x88 : 0x89);
}

static void v_float(struct pw *w, double d)
{
    uint64_t u;
    uint8_t b[8];
    SAVE(w);
    memcpy(&u, &d, sizeof u);
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(u >> (56 - 8 * i));
    put1(w, 'G');
    put(w, b, 8);
}

/* A new string object; returns its memo index. CPython keeps one object for the empty string and
 * for each one-character ASCII string: an unpickled file shares them, so they are written once. */
static uint64_t v_str(struct pw *w, const char *z)
{
    size_t n = strlen(z);
    if (n <= 1 && (uint8_t)z[0] < 128) {
        uint64_t *pMemo = &w->aTiny[(uint8_t)z[0]];
        if (*pMemo) {
            v_get(w, *pMemo - 1);
            return *pMemo - 1;
        }
        *pMemo = w->nMemo + 1;
    }
    SAVE(w);
    if (n <= 0xff) {
        put1(w, 0x8c);
        put1(w, (int)n);
    } else {
        put1(w, 'X');
        put_le(w, n, 4);
    }
    put(w, z, n);
    memoize(w);
    return w->nMemo - 1;
}

/* A string object shared by every use: written once, fetched after (*pMemo: index + 1, 0 before). */
static void v_shared(struct pw *w, const char *z, uint64_t *pMemo)
{
    if (*pMemo) v_get(w, *pMemo - 1);
    else *pMemo = v_str(w, z) + 1;
}

/* An empty dict or list, memoized: returns its memo index. */
static uint64_t v_empty(struct pw *w, int c)
{
    SAVE(w);
    put1(w, c);
    memoize(w);
    return w->nMemo - 1;
}

/* Items of a container with n items (pairs for a dict) in one batch (n <= 1000): open, close. */
static void batch_open(struct pw *w, int64_t n)
{
    if (n > 1) put1(w, '(');
}

static void batch_close(struct pw *w, int64_t n, int bDict)
{
    if (n > 1) put1(w, bDict ? 'u' : 'e');
    else if (n == 1) put1(w, bDict ? 's' : 'a');
}

/* The size of the pickler's batch (1000 items) that holds item i of a container of n. */
static int64_t batch_of(int64_t i, int64_t n)
{
    int64_t first = i - i % 1000;
    return n - first < 1000 ? n - first : 1000;
}

/* Before and after item i of a list of n items (batches of 1000, as the pickler appends them). */
static void item_begin(struct pw *w, int64_t i, int64_t n)
{
    if (i % 1000 == 0) batch_open(w, batch_of(i, n));
}

static void item_end(struct pw *w, int64_t i, int64_t n)
{
    if (i % 1000 == 999 || i == n - 1) batch_close(w, batch_of(i, n), 0);
}

/* ---- what the frames look like ---- */

enum { K_ACTION, K_ADDR, K_SIZE, K_STREAM, K_TIME, K_FRAMES, K_NAME, K_FILE, K_LINE, K_DEVFREE, K_DEVICE,
       K_ADDRESS, K_TOTAL, K_ALLOCATED, K_ACTIVE, K_REQUESTED, K_SEGTYPE, K_POOL, K_EXPANDABLE, K_BLOCKS, K_STATE,
       K_BSIZE, K_STAGE, K_ANAME, K_N };
static const char *const azKey[K_N] = {
    "action", "addr", "size", "stream", "time_us", "frames", "name", "filename", "line", "device_free", "device",
    "address", "total_size", "allocated_size", "active_size", "requested_size", "segment_type", "segment_pool_id",
    "is_expandable", "blocks", "state", "size", "stage", "name"};

enum { A_ALLOC, A_FREE_REQ, A_FREE, A_SEG_ALLOC, A_SEG_FREE, A_OOM, N_ACT };
static const char *const azAct[N_ACT] = {"alloc", "free_requested", "free_completed", "segment_alloc",
                                         "segment_free", "oom"};

struct frame {
    char *zName, *zFile;
    int line;
    uint64_t memo; /* index + 1 of its dict, 0 before its first save */
};

struct site {
    int *aFrame; /* indexes into aFrame, innermost first */
    int n;
    int bUsed;
};

#define N_OPS 24
#define N_PYFN 96
#define N_FWD_SITES 384
#define N_BWD_SITES 256
#define N_FREE_SITES 48
#define N_SITES (N_FWD_SITES + N_BWD_SITES + N_FREE_SITES + 8)

static const char *const azOp[N_OPS] = {
    "mm", "bmm", "addmm", "add", "mul", "div", "softmax", "layer_norm", "gelu", "silu", "embedding",
    "cat", "clone", "to_copy", "scaled_dot_product_attention", "linear", "matmul", "dropout", "transpose",
    "contiguous", "empty_strided", "native_layer_norm", "cross_entropy", "sum"};
static const char *const azArgs[] = {
    "at::Tensor const&, at::Tensor const&",
    ("c10::ArrayRef<c10::SymInt>, std::optional<c10::ScalarType>, std::optional<c10::Layout>, "
     "std::optional<c10::Device>, std::optional<bool>, std::optional<c10::MemoryFormat>"),
    "at::Tensor const&, c10::Scalar const&, c10::Scalar const&",
    "c10::DispatchKeySet, at::Tensor const&, at::Tensor const&, c10::Scalar const&",
    "at::Tensor const&, long, std::optional<c10::ScalarType>"};
static const char *const azInterp[][2] = {
    {"_PyEval_EvalFrameDefault", "/croot/python-split_1728047642222/work/build-static/Python/bytecodes.c"},
    {"cfunction_call", "/usr/local/src/conda/python-3.12.7/Objects/methodobject.c"},
    {"_PyObject_MakeTpCall", "/usr/local/src/conda/python-3.12.7/Objects/call.c"},
    {"_PyObject_Call_Prepend", "/usr/local/src/conda/python-3.12.7/Objects/call.c"},
    {"type_call", "/usr/local/src/conda/python-3.12.7/Objects/typeobject.c"},
    {"_PyObject_FastCallDictTstate", "/usr/local/src/conda/python-3.12.7/Objects/call.c"},
    {"slot_tp_call", "/usr/local/src/conda/python-3.12.7/Objects/typeobject.c"},
    {"_PyEval_EvalFrame", "/usr/local/src/conda/python-3.12.7/Include/internal/pycore_ceval.h"}};
static const char *const azTail[][2] = {
    {"PyEval_EvalCode", "/usr/local/src/conda/python-3.12.7/Python/ceval.c"},
    {"run_eval_code_obj", "/usr/local/src/conda/python-3.12.7/Python/pythonrun.c"},
    {"run_mod", "/usr/local/src/conda/python-3.12.7/Python/pythonrun.c"},
    {"pyrun_file", "/usr/local/src/conda/python-3.12.7/Python/pythonrun.c"},
    {"_PyRun_SimpleFileObject", "/usr/local/src/conda/python-3.12.7/Python/pythonrun.c"},
    {"_PyRun_AnyFileObject", "/usr/local/src/conda/python-3.12.7/Python/pythonrun.c"},
    {"pymain_run_file_obj", "/usr/local/src/conda/python-3.12.7/Modules/main.c"},
    {"Py_BytesMain", "/usr/local/src/conda/python-3.12.7/Modules/main.c"},
    {"__libc_init_first", "??"},
    {"__libc_start_main", "??"},
    {"_start", "??"}};
static const char *const azAutograd[] = {
    "torch::autograd::Node::operator()(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)",
    ("torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::GraphTask>&, "
     "torch::autograd::Node*, torch::autograd::InputBuffer&, std::shared_ptr<torch::autograd::ReadyQueue> const&)"),
    "torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)",
    "torch::autograd::Engine::thread_init(int, std::shared_ptr<torch::autograd::ReadyQueue> const&, bool)",
    ("torch::autograd::python::PythonEngine::thread_init(int, std::shared_ptr<torch::autograd::ReadyQueue> "
     "const&, bool)"),
    "execute_native_thread_routine",
    "start_thread",
    "clone"};

struct world {
    struct frame *aFrame;
    int nFrame, nFrameAlloc;
    struct site aSite[N_SITES];
    int nSite;
};

/* Add a frame; returns its index (-1 when out of memory). */
static int frame_add(struct world *g, const char *zName, const char *zFile, int line)
{
    if (g->nFrame == g->nFrameAlloc) {
        int n = g->nFrameAlloc ? g->nFrameAlloc * 2 : 1024;
        struct frame *a = realloc(g->aFrame, (size_t)n * sizeof *a);
        if (!a) return -1;
        g->aFrame = a;
        g->nFrameAlloc = n;
    }
    g->aFrame[g->nFrame].zName = strdup(zName);
    g->aFrame[g->nFrame].zFile = strdup(zFile);
    g->aFrame[g->nFrame].line = line;
    g->aFrame[g->nFrame].memo = 0;
    if (!g->aFrame[g->nFrame].zName || !g->aFrame[g->nFrame].zFile) return -1;
    return g->nFrame++;
}

/* The frame pools every traceback is made of. */
struct pools {
    int aCapture[3], aAlloc[4], aFree[4], aEmpty[3];
    int aOp[N_OPS][12]; /* each op's dispatch chain, innermost first */
    int aOpBwd[N_OPS];  /* each op's backward node */
    int aInterp[8], aTail[11], aAuto[8];
    int aPy[N_PYFN];    /* Python frames: module functions at lines */
    int pyMain, pyModule;
};

/* Build every frame (deterministic from the seed). Returns 0 or -1. */
static int make_frames(struct world *g, struct pools *p, uint64_t *r)
{
    static const char *const azCap[3] = {"torch::unwind::unwind()", "torch::CapturedTraceback::gather(bool, bool, bool)",
                                         "torch::cuda::(anonymous namespace)::gather_with_cpp()"};
    static const char *const azAl[4] = {
        ("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, unsigned long, "
         "CUstream_st*)"),
        ("c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::malloc(void**, signed char, unsigned long, "
         "CUstream_st*)"),
        "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::allocate(unsigned long)",
        ("at::TensorBase at::detail::_empty_generic<long>(c10::ArrayRef<long>, c10::Allocator*, c10::DispatchKeySet, "
         "c10::ScalarType, std::optional<c10::MemoryFormat>)")};
    static const char *const azFr[4] = {
        ("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::free(c10::cuda::CUDACachingAllocator::"
         "Native::Block*)"),
        "c10::cuda::CUDACachingAllocator::Native::local_raw_delete(void*)",
        "c10::StorageImpl::~StorageImpl()", "c10::TensorImpl::~TensorImpl()"};
    static const char *const azEm[3] = {
        ("at::detail::empty_generic(c10::ArrayRef<long>, c10::Allocator*, c10::DispatchKeySet, c10::ScalarType, "
         "std::optional<c10::MemoryFormat>)"),
        ("at::detail::empty_cuda(c10::ArrayRef<long>, c10::ScalarType, std::optional<c10::Device>, "
         "std::optional<c10::MemoryFormat>)"),
        "at::detail::empty_cuda(c10::ArrayRef<long>, c10::TensorOptions const&)"};
    static const char *const azCppFile[] = {"??", "", "RegisterCUDA.cpp", "VariableType_0.cpp", "VariableType_3.cpp",
                                            "Operators_2.cpp", "RegisterCompositeImplicitAutograd.cpp",
                                            "python_torch_functions_0.cpp", "Linear.cpp", "Blas.cpp"};
    static const char *const azPyFile[] = {
        "/home/user/project/train.py", "/home/user/project/model/transformer.py",
        "/home/user/project/model/attention.py", "/home/user/project/model/mlp.py",
        "/opt/conda/lib/python3.12/site-packages/torch/nn/modules/module.py",
        "/opt/conda/lib/python3.12/site-packages/torch/nn/modules/linear.py",
        "/opt/conda/lib/python3.12/site-packages/torch/nn/functional.py",
        "/opt/conda/lib/python3.12/site-packages/torch/optim/adamw.py",
        "/opt/conda/lib/python3.12/site-packages/torch/_tensor.py"};
    static const char *const azPyFn[] = {"forward", "_call_impl", "_wrapped_call_impl", "step", "backward",
                                         "attention", "mlp", "norm", "loss_fn", "train_step", "_single_tensor_adamw",
                                         "linear", "dropout", "softmax", "embed"};
    char z[1024];
    int i, k;
#define ADD(dst, name, file, line) \
    do { \
        if (((dst) = frame_add(g, (name), (file), (line))) < 0) return -1; \
    } while (0)
    for (i = 0; i < 3; i++) ADD(p->aCapture[i], azCap[i], i == 2 ? "memory_snapshot.cpp" : "??", 0);
    for (i = 0; i < 4; i++) ADD(p->aAlloc[i], azAl[i], i == 0 ? "CUDACachingAllocator.cpp" : "", 0);
    for (i = 0; i < 4; i++) ADD(p->aFree[i], azFr[i], i < 2 ? "CUDACachingAllocator.cpp" : "??", 0);
    for (i = 0; i < 3; i++) ADD(p->aEmpty[i], azEm[i], "??", 0);
    for (i = 0; i < N_OPS; i++) {
        for (k = 0; k < 12; k++) {
            const char *zArgs = azArgs[rng_below(r, sizeof azArgs / sizeof azArgs[0])];
            switch (k % 4) {
            case 0: snprintf(z, sizeof z, "at::native::%s_out_cuda_%d(%s)", azOp[i], k, zArgs); break;
            case 1: snprintf(z, sizeof z, "at::_ops::%s::redispatch(c10::DispatchKeySet, %s)", azOp[i], zArgs); break;
            case 2:
                snprintf(z, sizeof z,
                         ("c10::impl::wrap_kernel_functor_unboxed_<c10::impl::detail::WrapFunctionIntoFunctor_<"
                          "c10::CompileTimeFunctionPointer<at::Tensor (%s), &at::(anonymous namespace)::wrapper_CUDA_%s>"
                          ", at::Tensor, c10::guts::typelist::typelist<%s> >, at::Tensor (%s)>::call(c10::"
                          "OperatorKernel*, c10::DispatchKeySet, %s)"),
                         zArgs, azOp[i], zArgs, zArgs, zArgs);
                break;
            default: snprintf(z, sizeof z, "at::_ops::%s::call(%s)", azOp[i], zArgs); break;
            }
            ADD(p->aOp[i][k], z, azCppFile[rng_below(r, sizeof azCppFile / sizeof azCppFile[0])], 0);
        }
        snprintf(z, sizeof z, "torch::autograd::generated::%sBackward0::apply(std::vector<at::Tensor, "
                              "std::allocator<at::Tensor> >&&)", azOp[i]);
        ADD(p->aOpBwd[i], z, "Functions.cpp", 0);
    }
    for (i = 0; i < 8; i++) ADD(p->aInterp[i], azInterp[i][0], azInterp[i][1], 500 + 311 * i);
    for (i = 0; i < 11; i++) ADD(p->aTail[i], azTail[i][0], azTail[i][1], i < 8 ? 80 + 97 * i : 0);
    for (i = 0; i < 8; i++) ADD(p->aAuto[i], azAutograd[i], "??", 0);
    for (i = 0; i < N_PYFN; i++)
        ADD(p->aPy[i], azPyFn[rng_below(r, sizeof azPyFn / sizeof azPyFn[0])],
            azPyFile[1 + rng_below(r, sizeof azPyFile / sizeof azPyFile[0] - 1)], 10 + (int)rng_below(r, 1800));
    ADD(p->pyMain, "main", azPyFile[0], 212);
    ADD(p->pyModule, "<module>", azPyFile[0], 240);
#undef ADD
    return 0;
}

/* A traceback: kind 0 forward allocation, 1 backward allocation, 2 free. Returns 0 or -1. */
static int make_site(struct world *g, const struct pools *p, uint64_t *r, int kind)
{
    int a[160], n = 0, op = (int)rng_below(r, N_OPS), i;
    struct site *s = &g->aSite[g->nSite];
    for (i = 0; i < 3; i++) a[n++] = p->aCapture[i];
    if (kind == 2) {
        for (i = 0; i < 4; i++) a[n++] = p->aFree[i];
    } else {
        for (i = 0; i < 4; i++) a[n++] = p->aAlloc[i];
        for (i = 0; i < 3; i++) a[n++] = p->aEmpty[i];
    }
    for (i = (int)rng_below(r, 6); i < 12; i++) a[n++] = p->aOp[op][i];
    if (kind == 1) { /* the autograd engine's thread: no Python frames */
        a[n++] = p->aOpBwd[op];
        for (i = 0; i < 8; i++) a[n++] = p->aAuto[i];
    } else {
        int levels = 3 + (int)rng_below(r, 9);
        for (int l = 0; l < levels; l++) { /* the interpreter's frames between Python frames */
            int ni = 1 + (int)rng_below(r, 4);
            for (i = 0; i < ni; i++) a[n++] = p->aInterp[(l + i * 3 + (int)rng_below(r, 2)) % 8];
            a[n++] = p->aPy[rng_below(r, N_PYFN)];
        }
        a[n++] = p->aInterp[0];
        a[n++] = p->pyMain;
        a[n++] = p->aInterp[0];
        for (i = 0; i < 11; i++) a[n++] = p->aTail[i];
        a[n++] = p->pyModule;
    }
    if (!(s->aFrame = malloc((size_t)n * sizeof *s->aFrame))) return -1;
    memcpy(s->aFrame, a, (size_t)n * sizeof *a);
    s->n = n;
    s->bUsed = 0;
    g->nSite++;
    return 0;
}

/* ---- the caching allocator, one per device ---- */

#define SMALL_MAX (1 << 20)
#define SMALL_SEG (2 << 20)

struct block {
    uint64_t addr, size;
    int64_t seq;      /* the alloc event that made it live (-1: free) */
    int site;
};

struct seg {
    uint64_t addr, size;
    int bSmall;
    struct block *aBlk; /* in address order */
    int nBlk, nBlkAlloc;
};

/* A tensor the model holds. */
struct tensor {
    uint64_t addr, size;
    int iSeg;
};

struct dev {
    int id;
    uint64_t rng;
    uint64_t nextAddr;
    int64_t t;            /* time_us */
    int64_t seq;          /* events emitted */
    struct seg *aSeg;
    int nSeg, nSegAlloc;
    int64_t allocated, reserved, peakAlloc, peakReserved;
    int64_t aAct[N_ACT];
    int64_t nTarget;      /* events to write (pass 2) */
    int step, phase;      /* the training loop's place */
    struct tensor *aLive; /* the step's activations, in allocation order */
    int nLive, nLiveAlloc;
    int bInit;
};

/* Everything a run shares. */
struct gen {
    struct pw w;
    struct world g;
    struct pools p;
    uint64_t aKey[K_N], aAction[N_ACT], aStateMemo[2], aTypeMemo[2];
    int bWrite;          /* pass 2: the file, else counting */
    struct dev *d;       /* the device being written */
    uint64_t *aPre;      /* pass 2: memo index + 1 of the frames list of event seq (live at the dump), by seq */
    int64_t *aPreSeq;
    int nPre;
    int iPre;
    uint64_t lastList;   /* memo index of the last frames list written */
    int64_t nOomTotal;
};

/* Write one frames list of site s (a new list: each dict fetched, or saved the first time). */
static uint64_t write_frames(struct gen *G, int s)
{
    struct pw *w = &G->w;
    struct site *st = &G->g.aSite[s];
    uint64_t idx = v_empty(w, ']');
    st->bUsed = 1;
    for (int i = 0; i < st->n; i++) {
        struct frame *f = &G->g.aFrame[st->aFrame[i]];
        item_begin(w, i, st->n);
        if (f->memo) {
            v_get(w, f->memo - 1);
            item_end(w, i, st->n);
            continue;
        }
        f->memo = v_empty(w, '}') + 1;
        batch_open(w, 3);
        v_shared(w, azKey[K_NAME], &G->aKey[K_NAME]);
        v_str(w, f->zName);
        v_shared(w, azKey[K_FILE], &G->aKey[K_FILE]);
        v_str(w, f->zFile);
        v_shared(w, azKey[K_LINE], &G->aKey[K_LINE]);
        v_int(w, f->line);
        batch_close(w, 3, 1);
        item_end(w, i, st->n);
    }
    return idx;
}

/* One event of device d. frames: -1 a new list of site, else the memo index of a list already written. */
static void event(struct gen *G, struct dev *d, int act, uint64_t addr, int64_t size, int site, int64_t listMemo)
{
    struct pw *w = &G->w;
    d->t += 1 + (int64_t)rng_below(&d->rng, 60);
    d->aAct[act]++;
    switch (act) {
    case A_ALLOC: d->allocated += size; break;
    case A_FREE: d->allocated -= size; break;
    case A_SEG_ALLOC: d->reserved += size; break;
    case A_SEG_FREE: d->reserved -= size; break;
    default: break;
    }
    if (d->allocated > d->peakAlloc) d->peakAlloc = d->allocated;
    if (d->reserved > d->peakReserved) d->peakReserved = d->reserved;
    /* pass 2: an alloc whose list `segments` already holds (its block was live at the dump), and the
     * segment_alloc just before such an alloc (the same list) */
    if (G->bWrite && (act == A_ALLOC || act == A_SEG_ALLOC) && G->iPre < G->nPre &&
        G->aPreSeq[G->iPre] == d->seq + (act == A_SEG_ALLOC)) {
        listMemo = (int64_t)G->aPre[G->iPre] - 1;
        G->iPre += act == A_ALLOC;
        G->g.aSite[site].bUsed = 1;
    }
    item_begin(w, d->seq, d->nTarget >= 0 ? d->nTarget : INT64_MAX);
    v_empty(w, '}');
    batch_open(w, 6);
    v_shared(w, azKey[K_ACTION], &G->aKey[K_ACTION]);
    v_shared(w, azAct[act], &G->aAction[act]);
    v_shared(w, azKey[act == A_OOM ? K_DEVFREE : K_ADDR], &G->aKey[act == A_OOM ? K_DEVFREE : K_ADDR]);
    v_int(w, (int64_t)addr);
    v_shared(w, azKey[K_SIZE], &G->aKey[K_SIZE]);
    v_int(w, size);
    v_shared(w, azKey[K_STREAM], &G->aKey[K_STREAM]);
    v_int(w, 0);
    v_shared(w, azKey[K_TIME], &G->aKey[K_TIME]);
    v_int(w, d->t);
    v_shared(w, azKey[K_FRAMES], &G->aKey[K_FRAMES]);
    if (listMemo >= 0) v_get(w, (uint64_t)listMemo);
    else G->lastList = write_frames(G, site);
    if (listMemo >= 0) G->lastList = (uint64_t)listMemo;
    batch_close(w, 6, 1);
    item_end(w, d->seq, d->nTarget >= 0 ? d->nTarget : INT64_MAX);
    d->seq++;
}

/* Room for one more block in segment g. Returns 0 or -1. */
static int blk_room(struct seg *g)
{
    if (g->nBlk < g->nBlkAlloc) return 0;
    int n = g->nBlkAlloc ? g->nBlkAlloc * 2 : 8;
    struct block *a = realloc(g->aBlk, (size_t)n * sizeof *a);
    if (!a) return -1;
    g->aBlk = a;
    g->nBlkAlloc = n;
    return 0;
}

/* Allocate size bytes at site on device d: events as the caching allocator makes them. Returns 0 or -1. */
static int d_alloc(struct gen *G, struct dev *d, uint64_t size, int site, struct tensor *pOut)
{
    int bSmall = size <= SMALL_MAX, i, j;
    size = (size + 511) & ~(uint64_t)511;
    for (i = 0; i < d->nSeg; i++) { /* first fit in a cached segment of the same pool */
        struct seg *g = &d->aSeg[i];
        if (g->bSmall != bSmall) continue;
        for (j = 0; j < g->nBlk; j++) {
            struct block *b = &g->aBlk[j];
            if (b->seq >= 0 || b->size < size) continue;
            if (b->size > size) { /* split: the rest stays free after it */
                if (blk_room(g)) return -1;
                b = &g->aBlk[j];
                memmove(&g->aBlk[j + 2], &g->aBlk[j + 1], (size_t)(g->nBlk - j - 1) * sizeof *b);
                g->aBlk[j + 1] = (struct block){b->addr + size, b->size - size, -1, 0};
                g->nBlk++;
                b->size = size;
            }
            b->seq = d->seq;
            b->site = site;
            event(G, d, A_ALLOC, b->addr, (int64_t)size, site, -1);
            *pOut = (struct tensor){b->addr, size, i};
            return 0;
        }
    }
    { /* a new segment: segment_alloc, then the alloc sharing its frames */
        uint64_t segSize = bSmall ? SMALL_SEG : size < (10u << 20) ? (20u << 20) : (size + (2u << 20) - 1) & ~(uint64_t)((2u << 20) - 1);
        struct seg *g;
        if (d->nSeg == d->nSegAlloc) {
            int n = d->nSegAlloc ? d->nSegAlloc * 2 : 64;
            struct seg *a = realloc(d->aSeg, (size_t)n * sizeof *a);
            if (!a) return -1;
            d->aSeg = a;
            d->nSegAlloc = n;
        }
        g = &d->aSeg[d->nSeg];
        memset(g, 0, sizeof *g);
        g->addr = d->nextAddr;
        g->size = segSize;
        g->bSmall = bSmall;
        d->nextAddr += segSize;
        if (blk_room(g)) return -1;
        g->aBlk[g->nBlk++] = (struct block){g->addr, size, d->seq + 1, site};
        if (segSize > size) {
            if (blk_room(g)) return -1;
            g->aBlk[g->nBlk++] = (struct block){g->addr + size, segSize - size, -1, 0};
        }
        d->nSeg++;
        event(G, d, A_SEG_ALLOC, g->addr, (int64_t)segSize, site, -1);
        event(G, d, A_ALLOC, g->addr, (int64_t)size, site, (int64_t)G->lastList);
        *pOut = (struct tensor){g->addr, size, d->nSeg - 1};
    }
    return 0;
}

/* Free tensor t (free_requested, then free_completed sharing its frames); merge free neighbours. */
static void d_free(struct gen *G, struct dev *d, const struct tensor *t, int site)
{
    struct seg *g = &d->aSeg[t->iSeg];
    int j;
    for (j = 0; j < g->nBlk && g->aBlk[j].addr != t->addr; j++) {}
    if (j == g->nBlk) return; /* cannot happen */
    event(G, d, A_FREE_REQ, t->addr, (int64_t)t->size, site, -1);
    event(G, d, A_FREE, t->addr, (int64_t)t->size, site, (int64_t)G->lastList);
    g->aBlk[j].seq = -1;
    if (j + 1 < g->nBlk && g->aBlk[j + 1].seq < 0) {
        g->aBlk[j].size += g->aBlk[j + 1].size;
        memmove(&g->aBlk[j + 1], &g->aBlk[j + 2], (size_t)(g->nBlk - j - 2) * sizeof g->aBlk[0]);
        g->nBlk--;
    }
    if (j > 0 && g->aBlk[j - 1].seq < 0) {
        g->aBlk[j - 1].size += g->aBlk[j].size;
        memmove(&g->aBlk[j], &g->aBlk[j + 1], (size_t)(g->nBlk - j - 1) * sizeof g->aBlk[0]);
        g->nBlk--;
    }
}

/* Release every cached segment with no live block (empty_cache, or before an OOM is raised). */
static void d_empty_cache(struct gen *G, struct dev *d, int site)
{
    int i, k = 0;
    /* tensors refer to segments by index: keep the order, compact, then renumber the live ones */
    int *aNew = malloc((size_t)(d->nSeg ? d->nSeg : 1) * sizeof *aNew);
    if (!aNew) return;
    for (i = 0; i < d->nSeg; i++) {
        struct seg *g = &d->aSeg[i];
        if (g->nBlk == 1 && g->aBlk[0].seq < 0) {
            event(G, d, A_SEG_FREE, g->addr, (int64_t)g->size, site, -1);
            free(g->aBlk);
            aNew[i] = -1;
            continue;
        }
        aNew[i] = k;
        d->aSeg[k++] = *g;
    }
    d->nSeg = k;
    for (i = 0; i < d->nLive; i++) d->aLive[i].iSeg = aNew[d->aLive[i].iSeg];
    free(aNew);
}

/* Keep t among the step's live tensors. Returns 0 or -1. */
static int keep(struct dev *d, const struct tensor *t)
{
    if (d->nLive == d->nLiveAlloc) {
        int n = d->nLiveAlloc ? d->nLiveAlloc * 2 : 256;
        struct tensor *a = realloc(d->aLive, (size_t)n * sizeof *a);
        if (!a) return -1;
        d->aLive = a;
        d->nLiveAlloc = n;
    }
    d->aLive[d->nLive++] = *t;
    return 0;
}

#define LAYERS 12
#define ACTS 10
#define N_PARAMS 40

/* The size of activation a of layer l (the same every step), from the device's shape. */
static uint64_t act_size(int dev, int l, int a)
{
    static const uint64_t aBase[ACTS] = {8u << 20, 24u << 20, 2u << 20, 512u << 10, 64u << 10,
                                         8u << 20, 32u << 20, 6u << 20, 4096, 128u << 10};
    return aBase[a] + (uint64_t)((l * 7 + a * 3 + dev) % 5) * 4096;
}

/* Run device d's training loop until it has emitted nTarget events (pass 2) or the writer reached
 * nBytesTo (pass 1: nTarget < 0). Returns 0 or -1. */
static int run_device(struct gen *G, struct dev *d, uint64_t nBytesTo)
{
    struct tensor t;
    const int nFwd = N_FWD_SITES, fwd0 = 0, bwd0 = N_FWD_SITES, free0 = N_FWD_SITES + N_BWD_SITES;
#define DONE() (d->nTarget >= 0 ? d->seq >= d->nTarget : G->w.nBytes >= nBytesTo)
    /* parameters, once, live to the end */
    for (int i = 0; i < N_PARAMS && !DONE(); i++) {
        if (d_alloc(G, d, (uint64_t)(4 + i % 13) << 20, fwd0 + i % 16, &t)) return -1;
    }
    while (!DONE()) {
        int nStart = d->nLive, bOom = d->step % 97 == 7;
        int iOomAt = (int)rng_below(&d->rng, LAYERS);
        /* forward: activations kept, temporaries freed at once */
        for (int l = 0; l < LAYERS && !DONE(); l++) {
            if (bOom && l == iOomAt) { /* out of memory: the cache emptied, the oom, the step abandoned */
                d_empty_cache(G, d, free0 + N_FREE_SITES - 1);
                event(G, d, A_OOM, (uint64_t)(d->reserved ? 1 << 20 : 0) + 3u * 512, (int64_t)2 << 30,
                      fwd0 + (l * ACTS) % nFwd, -1);
                G->nOomTotal++;
                break;
            }
            for (int a = 0; a < ACTS && !DONE(); a++) {
                int site = fwd0 + (int)((uint64_t)(l % 4) * ACTS + (uint64_t)a + (uint64_t)(d->step % 3) * 40) % nFwd;
                if (d_alloc(G, d, act_size(d->id, l, a), site, &t)) return -1;
                if (a % 3 == 2) d_free(G, d, &t, free0 + (a + l) % N_FREE_SITES);
                else if (keep(d, &t)) return -1;
            }
        }
        /* backward: gradients of each activation, then both freed, in reverse */
        while (d->nLive > nStart && !DONE()) {
            struct tensor act = d->aLive[--d->nLive], grad;
            int site = bwd0 + (int)((uint64_t)d->nLive * 7 % N_BWD_SITES);
            if (!bOom) {
                if (d_alloc(G, d, act.size, site, &grad)) return -1;
                d_free(G, d, &grad, free0 + (int)(d->nLive % N_FREE_SITES));
            }
            if (!DONE()) d_free(G, d, &act, free0 + (int)((d->nLive + 5) % N_FREE_SITES));
        }
        d->step++;
        if (d->step % 50 == 3 && !DONE()) d_empty_cache(G, d, free0 + N_FREE_SITES - 2);
    }
#undef DONE
    return 0;
}

static void dev_init(struct dev *d, int id, uint64_t seed)
{
    memset(d, 0, sizeof *d);
    d->id = id;
    d->rng = seed * 1000003u + (uint64_t)id;
    d->nextAddr = 0x7f0000000000ull + ((uint64_t)id << 38);
    d->t = 1762924151985060 + id * 17;
    d->nTarget = -1;
}

static void dev_free(struct dev *d)
{
    for (int i = 0; i < d->nSeg; i++) free(d->aSeg[i].aBlk);
    free(d->aSeg);
    free(d->aLive);
}

/* ---- the file ---- */

/* The `segments` list from the devices' states at the dump; records which events' lists it holds. */
static int write_segments(struct gen *G, struct dev *aDev, int nDev)
{
    struct pw *w = &G->w;
    int nAll = 0;
    for (int d = 0; d < nDev; d++) nAll += aDev[d].nSeg;
    v_empty(w, ']');
    for (int d = 0, iSeg = 0; d < nDev; d++) {
        for (int i = 0; i < aDev[d].nSeg; i++, iSeg++) {
            const struct seg *g = &aDev[d].aSeg[i];
            int64_t allocated = 0;
            item_begin(w, iSeg, nAll);
            for (int j = 0; j < g->nBlk; j++) allocated += g->aBlk[j].seq >= 0 ? (int64_t)g->aBlk[j].size : 0;
            v_empty(w, '}');
            batch_open(w, 12);
            v_shared(w, azKey[K_DEVICE], &G->aKey[K_DEVICE]);
            v_int(w, d);
            v_shared(w, azKey[K_ADDRESS], &G->aKey[K_ADDRESS]);
            v_int(w, (int64_t)g->addr);
            v_shared(w, azKey[K_TOTAL], &G->aKey[K_TOTAL]);
            v_int(w, (int64_t)g->size);
            v_shared(w, azKey[K_ALLOCATED], &G->aKey[K_ALLOCATED]);
            v_int(w, allocated);
            v_shared(w, azKey[K_ACTIVE], &G->aKey[K_ACTIVE]);
            v_int(w, allocated);
            v_shared(w, azKey[K_REQUESTED], &G->aKey[K_REQUESTED]);
            v_int(w, allocated);
            v_shared(w, azKey[K_STREAM], &G->aKey[K_STREAM]);
            v_int(w, 0);
            v_shared(w, azKey[K_SEGTYPE], &G->aKey[K_SEGTYPE]);
            v_shared(w, g->bSmall ? "small" : "large", &G->aTypeMemo[g->bSmall]);
            v_shared(w, azKey[K_POOL], &G->aKey[K_POOL]);
            SAVE(w); /* the tuple's own save, then its items' */
            v_int(w, 0);
            v_int(w, 0);
            put1(w, 0x86); /* TUPLE2, memoized */
            memoize(w);
            v_shared(w, azKey[K_EXPANDABLE], &G->aKey[K_EXPANDABLE]);
            v_bool(w, 0);
            v_shared(w, azKey[K_FRAMES], &G->aKey[K_FRAMES]);
            v_empty(w, ']');
            v_shared(w, azKey[K_BLOCKS], &G->aKey[K_BLOCKS]);
            v_empty(w, ']');
            for (int j = 0; j < g->nBlk; j++) {
                const struct block *b = &g->aBlk[j];
                item_begin(w, j, g->nBlk);
                v_empty(w, '}');
                batch_open(w, 5);
                v_shared(w, azKey[K_ADDRESS], &G->aKey[K_ADDRESS]);
                v_int(w, (int64_t)b->addr);
                v_shared(w, azKey[K_BSIZE], &G->aKey[K_SIZE]);
                v_int(w, (int64_t)b->size);
                v_shared(w, azKey[K_REQUESTED], &G->aKey[K_REQUESTED]);
                v_int(w, (int64_t)b->size);
                v_shared(w, azKey[K_STATE], &G->aKey[K_STATE]);
                v_shared(w, b->seq >= 0 ? "active_allocated" : "inactive", &G->aStateMemo[b->seq >= 0]);
                v_shared(w, azKey[K_FRAMES], &G->aKey[K_FRAMES]);
                if (b->seq >= 0) { /* the alloc's own list, fetched by that event later */
                    G->aPreSeq[G->nPre] = (int64_t)d << 40 | b->seq;
                    G->aPre[G->nPre++] = write_frames(G, b->site) + 1;
                } else {
                    v_empty(w, ']');
                }
                batch_close(w, 5, 1);
                item_end(w, j, g->nBlk);
            }
            batch_close(w, 12, 1);
            item_end(w, iSeg, nAll);
        }
    }
    return 0;
}

static void write_settings(struct gen *G)
{
    static const char *const azDiv[] = {"1", "2", "4", "8", "16", "32", "64", "128", "256", "512", "1024", "2048",
                                        "4096", "8192", "16384", "32768"};
    struct pw *w = &G->w;
    uint64_t m = 0;
    v_str(w, "allocator_settings");
    v_empty(w, '}');
    batch_open(w, 8);
    v_str(w, "PYTORCH_CUDA_ALLOC_CONF");
    v_str(w, "");
    v_str(w, "max_split_size");
    v_int(w, -1);
    v_str(w, "garbage_collection_threshold");
    v_float(w, 0.0);
    v_str(w, "expandable_segments");
    v_bool(w, 0);
    v_str(w, "pinned_num_register_threads");
    v_int(w, 1);
    v_str(w, "release_lock_on_cudamalloc");
    v_bool(w, 0);
    v_str(w, "pinned_use_cuda_host_register");
    v_bool(w, 0);
    v_str(w, "roundup_power2_divisions");
    v_empty(w, '}');
    batch_open(w, 16);
    for (int i = 0; i < 16; i++) {
        v_str(w, azDiv[i]);
        v_int(w, 0);
    }
    batch_close(w, 16, 1);
    batch_close(w, 8, 1);
    (void)m;
}

/* external_annotations: an optimizer step range per device near its end. */
static void write_annotations(struct gen *G, struct dev *aDev, int nDev)
{
    struct pw *w = &G->w;
    uint64_t aStage[2] = {0, 0}, kStage = 0, kName = 0, kDev = 0, kTime = 0;
    v_str(w, "external_annotations");
    v_empty(w, ']');
    batch_open(w, 2 * nDev);
    for (int d = 0; d < nDev; d++)
        for (int e = 0; e < 2; e++) {
            v_empty(w, '}');
            batch_open(w, 4);
            v_shared(w, "stage", &kStage);
            v_shared(w, e ? "END" : "START", &aStage[e]);
            v_shared(w, "name", &kName);
            v_str(w, "Optimizer.step#AdamW.step");
            v_shared(w, "device", &kDev);
            v_int(w, d);
            v_shared(w, "time_us", &kTime);
            v_int(w, aDev[d].t - 400 + 300 * e);
            batch_close(w, 4, 1);
        }
    batch_close(w, 2 * nDev, 0);
}

/* Parse "1G", "300M", "64K", "123" (powers of 1024). Returns 0 or -1. */
static int parse_size(const char *z, uint64_t *p)
{
    char *e;
    double v = strtod(z, &e);
    if (e == z || v <= 0) return -1;
    if (*e == 'K' || *e == 'k') v *= 1024, e++;
    else if (*e == 'M' || *e == 'm') v *= 1048576, e++;
    else if (*e == 'G' || *e == 'g') v *= 1073741824.0, e++;
    if (*e == 'B' || *e == 'b') e++;
    if (*e) return -1;
    *p = (uint64_t)v;
    return 0;
}

static int cmp_pre(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    uint64_t size = 1ull << 30, seed = 1;
    int nDev = 4, rc = 1;
    const char *zOut = NULL, *zSummary = NULL;
    struct gen G;
    struct dev *aDev = NULL;
    FILE *fs = stdout;
    uint64_t r;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--size") && v) {
            if (parse_size(v, &size)) goto usage;
            i++;
        } else if (!strcmp(a, "--devices") && v) {
            nDev = atoi(v);
            i++;
        } else if (!strcmp(a, "--seed") && v) {
            seed = strtoull(v, NULL, 10);
            i++;
        } else if (!strcmp(a, "-o") && v) {
            zOut = v;
            i++;
        } else if (!strcmp(a, "--summary") && v) {
            zSummary = v;
            i++;
        } else {
            goto usage;
        }
    }
    if (!zOut || nDev < 1 || nDev > 64 || size < 4096) goto usage;
    memset(&G, 0, sizeof G);
    r = seed;
    if (make_frames(&G.g, &G.p, &r)) goto oom;
    for (int i = 0; i < N_FWD_SITES; i++)
        if (make_site(&G.g, &G.p, &r, 0)) goto oom;
    for (int i = 0; i < N_BWD_SITES; i++)
        if (make_site(&G.g, &G.p, &r, 1)) goto oom;
    for (int i = 0; i < N_FREE_SITES; i++)
        if (make_site(&G.g, &G.p, &r, 2)) goto oom;
    if (!(aDev = calloc((size_t)nDev, sizeof *aDev))) goto oom;

    /* pass 1: each device's share of the bytes, counted, gives its event count and its state at the dump */
    for (int d = 0; d < nDev; d++) {
        uint64_t to = size * 96 / 100 / (uint64_t)nDev * (uint64_t)(d + 1);
        dev_init(&aDev[d], d, seed);
        if (run_device(&G, &aDev[d], to)) goto oom;
    }
    {
        int nLive = 0;
        for (int d = 0; d < nDev; d++)
            for (int i = 0; i < aDev[d].nSeg; i++) nLive += aDev[d].aSeg[i].nBlk;
        G.aPre = malloc((size_t)(nLive + 1) * sizeof *G.aPre);
        G.aPreSeq = malloc((size_t)(nLive + 1) * sizeof *G.aPreSeq);
        if (!G.aPre || !G.aPreSeq) goto oom;
    }

    /* pass 2: the file */
    for (int i = 0; i < G.g.nFrame; i++) G.g.aFrame[i].memo = 0;
    for (int i = 0; i < G.g.nSite; i++) G.g.aSite[i].bUsed = 0;
    memset(G.aKey, 0, sizeof G.aKey);
    memset(G.aAction, 0, sizeof G.aAction);
    free(G.w.aFrame);
    memset(&G.w, 0, sizeof G.w);
    if (!(G.w.f = fopen(zOut, "wb"))) {
        fprintf(stderr, "gen_snapshot: %s: %s\n", zOut, strerror(errno));
        goto done;
    }
    G.bWrite = 1;
    pw_raw(&G.w, "\x80\x04", 2);
    v_empty(&G.w, '}');
    batch_open(&G.w, 4);
    v_str(&G.w, "segments");
    write_segments(&G, aDev, nDev);
    {
        /* the lists `segments` holds, in the order the events reach them: by device, then sequence */
        int64_t (*a)[2] = malloc((size_t)(G.nPre + 1) * sizeof *a);
        if (!a) goto oom;
        for (int i = 0; i < G.nPre; i++) a[i][0] = G.aPreSeq[i], a[i][1] = (int64_t)G.aPre[i];
        qsort(a, (size_t)G.nPre, sizeof *a, cmp_pre);
        for (int i = 0; i < G.nPre; i++) G.aPreSeq[i] = a[i][0], G.aPre[i] = (uint64_t)a[i][1];
        free(a);
    }
    v_str(&G.w, "device_traces");
    v_empty(&G.w, ']');
    batch_open(&G.w, nDev);
    for (int d = 0; d < nDev; d++) {
        struct dev *p = &aDev[d], q;
        dev_init(&q, d, seed);
        q.nTarget = p->seq;
        /* this device's pre-written lists: sequence numbers without the device */
        for (int i = G.iPre; i < G.nPre && (G.aPreSeq[i] >> 40) == d; i++) G.aPreSeq[i] &= ((int64_t)1 << 40) - 1;
        v_empty(&G.w, ']');
        if (run_device(&G, &q, 0)) goto oom;
        if (q.allocated != p->allocated || q.reserved != p->reserved) {
            fprintf(stderr, "gen_snapshot: internal error: the two passes differ\n");
            goto done;
        }
        for (int a = 0; a < N_ACT; a++) p->aAct[a] = q.aAct[a];
        dev_free(&q);
    }
    batch_close(&G.w, nDev, 0);
    write_settings(&G);
    write_annotations(&G, aDev, nDev);
    batch_close(&G.w, 4, 1);
    put1(&G.w, '.');
    commit(&G.w, 1);
    if (G.w.bErr || fclose(G.w.f) != 0) {
        G.w.f = NULL;
        fprintf(stderr, "gen_snapshot: %s: cannot write\n", zOut);
        goto done;
    }
    G.w.f = NULL;

    /* what was written */
    if (zSummary && !(fs = fopen(zSummary, "w"))) {
        fprintf(stderr, "gen_snapshot: %s: %s\n", zSummary, strerror(errno));
        goto done;
    }
    {
        int64_t aTot[N_ACT] = {0}, nEv = 0, nSeg = 0, nBlk = 0;
        int nUsed = 0;
        for (int i = 0; i < G.g.nSite; i++) { /* distinct frame sequences among the tracebacks written */
            const struct site *a = &G.g.aSite[i];
            int bNew = a->bUsed;
            for (int j = 0; j < i && bNew; j++) {
                const struct site *b = &G.g.aSite[j];
                bNew = !(b->bUsed && b->n == a->n && !memcmp(a->aFrame, b->aFrame, (size_t)a->n * sizeof *a->aFrame));
            }
            nUsed += bNew;
        }
        fprintf(fs, "bytes %" PRIu64 "\nseed %" PRIu64 "\ndevices %d\n", G.w.nBytes, seed, nDev);
        for (int d = 0; d < nDev; d++) {
            const struct dev *p = &aDev[d];
            for (int a = 0; a < N_ACT; a++) {
                fprintf(fs, "device.%d.%s %" PRId64 "\n", d, azAct[a], p->aAct[a]);
                aTot[a] += p->aAct[a];
                nEv += p->aAct[a];
            }
            fprintf(fs, "device.%d.peak_allocated %" PRId64 "\ndevice.%d.peak_reserved %" PRId64 "\n", d, p->peakAlloc,
                    d, p->peakReserved);
            fprintf(fs, "device.%d.allocated_at_dump %" PRId64 "\ndevice.%d.reserved_at_dump %" PRId64 "\n", d,
                    p->allocated, d, p->reserved);
            nSeg += p->nSeg;
            for (int i = 0; i < p->nSeg; i++)
                for (int j = 0; j < p->aSeg[i].nBlk; j++) nBlk += p->aSeg[i].aBlk[j].seq >= 0;
        }
        for (int a = 0; a < N_ACT; a++) fprintf(fs, "events.%s %" PRId64 "\n", azAct[a], aTot[a]);
        fprintf(fs, "events %" PRId64 "\nsegments %" PRId64 "\nlive_blocks %" PRId64 "\nstacks %d\nframes %d\n",
                nEv, nSeg, nBlk, nUsed, G.g.nFrame);
    }
    if (fs != stdout && fclose(fs) != 0) goto done;
    rc = 0;
    goto done;
oom:
    fprintf(stderr, "gen_snapshot: out of memory\n");
    goto done;
usage:
    fprintf(stderr, "usage: gen_snapshot -o FILE [--size SIZE (default 1G; K, M, G suffixes)] [--devices N (4)]\n"
                    "                    [--seed S (1)] [--summary FILE (default stdout)]\n");
    return 2;
done:
    if (G.w.f) fclose(G.w.f);
    free(G.w.aFrame);
    for (int d = 0; aDev && d < nDev; d++) dev_free(&aDev[d]);
    free(aDev);
    for (int i = 0; i < G.g.nFrame; i++) free(G.g.aFrame[i].zName), free(G.g.aFrame[i].zFile);
    free(G.g.aFrame);
    for (int i = 0; i < G.g.nSite; i++) free(G.g.aSite[i].aFrame);
    free(G.aPre);
    free(G.aPreSeq);
    return rc;
}
