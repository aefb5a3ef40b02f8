/* Test fixture: synthetic PyTorch training jobs of known make-up (bdjob.h). */
#include "bdjob.h"

#include <stdio.h>
#include <stdlib.h>

#include "vramtrace/schema.h"

static int64_t py2(struct tg *g, const char *zFile, int line, const char *zFn, const char *zUserFile, int userLine,
                   const char *zUserFn, const char *zNative, const char *zModule, int64_t hash)
{
    struct tg_frame a[3] = {{VT_FRAME_PYTHON, 0, zFn, zFile, NULL, line},
                            {VT_FRAME_PYTHON, 0, zUserFn, zUserFile, NULL, userLine},
                            {VT_FRAME_NATIVE, 0x1000, zNative, NULL, zModule, 0}};
    return tg_stack_frames(g, a, 3, hash);
}

static int64_t native2(struct tg *g, const char *zFn1, const char *zMod1, const char *zFn2, const char *zMod2, int64_t hash)
{
    struct tg_frame a[2] = {{VT_FRAME_NATIVE, 0x2000, zFn1, NULL, zMod1, 0}, {VT_FRAME_NATIVE, 0x3000, zFn2, NULL, zMod2, 0}};
    return tg_stack_frames(g, a, 2, hash);
}

void bd_stacks(struct tg *g, struct bd_stacks *s)
{
    const char *zAlloc = "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc";
    s->param = py2(g, "/venv/lib/python3.12/site-packages/torch/nn/modules/module.py", 942, "Module._apply", "train.py",
                   20, "main", zAlloc, "/venv/torch/lib/libc10_cuda.so", 11);
    s->fwd = py2(g, "/venv/lib/python3.12/site-packages/torch/nn/modules/linear.py", 134, "Linear.forward", "train.py", 66,
                 "train", zAlloc, "/venv/torch/lib/libc10_cuda.so", 12);
    s->eng = native2(g, "torch::autograd::generated::MmBackward0::apply(std::vector<at::Tensor>&&)",
                     "/venv/torch/lib/libtorch_cpu.so",
                     "torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)",
                     "/venv/torch/lib/libtorch_cpu.so", 13);
    s->acc = native2(g, "torch::autograd::AccumulateGrad::apply(std::vector<at::Tensor>&&)", "/venv/torch/lib/libtorch_cpu.so",
                     "torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)",
                     "/venv/torch/lib/libtorch_cpu.so", 14);
    s->opt = py2(g, "/venv/lib/python3.12/site-packages/torch/optim/adam.py", 165, "Adam._init_group", "train.py", 72,
                 "train", zAlloc, "/venv/torch/lib/libc10_cuda.so", 15);
    s->zero = py2(g, "/venv/lib/python3.12/site-packages/torch/optim/optimizer.py", 1003, "Optimizer.zero_grad", "train.py",
                  63, "train", "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::free",
                  "/venv/torch/lib/libc10_cuda.so", 16);
    s->cublas = py2(g, "/venv/lib/python3.12/site-packages/torch/nn/modules/linear.py", 134, "Linear.forward", "train.py",
                    66, "train", "at::cuda::getCurrentCUDABlasHandle()", "/venv/torch/lib/libtorch_cuda.so", 17);
    s->nccl = native2(g, NULL, "/venv/nvidia/nccl/lib/libnccl.so.2", "ncclCommInitRankConfig",
                      "/venv/nvidia/nccl/lib/libnccl.so.2", 18);
    s->lib = py2(g, "/home/u/ext.py", 10, "make_table", "train.py", 30, "main", "foo_alloc_table", "/opt/foo/libfoo.so.1",
                 19);
    s->seg = s->fwd;
    s->leak = py2(g, "metrics.py", 12, "Meter.update", "train.py", 74, "train", zAlloc, "/venv/torch/lib/libc10_cuda.so", 20);
    s->ownopt = py2(g, "/venv/lib/python3.12/site-packages/torch/optim/optimizer.py", 487,
                    "Optimizer.profile_hook_step.<locals>.wrapper", "myopt.py", 64, "HandSGD.step", zAlloc,
                    "/venv/torch/lib/libc10_cuda.so", 21);
}

void bd_mem(struct tg *g, int64_t ts, int op, int64_t addr, int64_t bytes, int64_t stack)
{
    tg_memop(g, ts, op, 0, VT_MEMKIND_DEVICE, addr, bytes, stack, -1, -1);
}

void bd_runtime_alloc(struct tg *g, int64_t ts)
{
    struct tg_memrow m = {ts, VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, 0x7f0000000000LL, 2 * MiB, 0, TG_NULL, TG_NULL, 0, 0,
                          0, TG_NULL, TG_NULL, TG_NULL, TG_NULL, TG_NULL, TG_NULL, TG_NULL, TG_NULL};
    tg_memory_row(g, &m);
}

void bd_job(const char *zPath, const char *zRank, int64_t act, int bNvtx, const char *zCmd, int64_t leak)
{
    struct tg *g = tg_open(zPath);
    struct bd_stacks s;
    int64_t a = 0x7f1000000000LL;
    if (!g) {
        fprintf(stderr, "bd_job: cannot write %s\n", zPath);
        exit(1);
    }
    bd_stacks(g, &s);
    tg_meta(g, "config.tensors", "1");
    tg_meta(g, "cmdline", zCmd ? zCmd : "python train.py --batch-size 8");
    if (zRank) tg_meta(g, "rank", zRank), tg_meta(g, "world_size", "2");
    tg_device(g, 0, "Test GPU", 40 * GiB);
    bd_runtime_alloc(g, 1 * MS);
    for (int i = 0; i < 4; i++) bd_mem(g, 2 * MS + i, 1, a + (int64_t)i * GiB, 64 * MiB, s.param);
    bd_mem(g, 3 * MS, 1, a + 10 * GiB, 32 * MiB, s.cublas);
    bd_mem(g, 4 * MS, 1, a + 11 * GiB, 128 * MiB, s.nccl);
    bd_mem(g, 5 * MS, 1, a + 12 * GiB, 16 * MiB, s.lib);
    for (int k = 0; k < 4; k++) {
        int64_t t0 = 100 * MS * (k + 1), b = a + 100 * GiB * (k + 1);
        if (k > 0)
            for (int i = 0; i < 4; i++) bd_mem(g, t0 + 1 * MS + i, 2, a + 100 * GiB * k + 20 * GiB + i * GiB, 64 * MiB, s.zero);
        for (int i = 0; i < 4; i++) bd_mem(g, t0 + 10 * MS + i, 1, b + i * GiB, act, s.fwd);
        bd_mem(g, t0 + 14 * MS, 1, b + 8 * GiB, 128 * MiB, s.fwd);
        bd_mem(g, t0 + 15 * MS, 2, b + 8 * GiB, 128 * MiB, s.fwd);
        bd_mem(g, t0 + 20 * MS, 1, b + 9 * GiB, 256 * MiB, s.eng);
        for (int i = 0; i < 4; i++) bd_mem(g, t0 + 21 * MS + i, 1, b + 20 * GiB + i * GiB, 64 * MiB, s.acc);
        for (int i = 0; i < 4; i++) bd_mem(g, t0 + 25 * MS + i, 2, b + i * GiB, act, s.eng);
        bd_mem(g, t0 + 29 * MS, 2, b + 9 * GiB, 256 * MiB, s.eng);
        if (k == 0)
            for (int i = 0; i < 8; i++) bd_mem(g, t0 + 40 * MS + i, 1, a + 30 * GiB + i * GiB, 64 * MiB, s.opt);
        bd_mem(g, t0 + 41 * MS, 1, b + 10 * GiB, 64 * MiB, s.opt);
        bd_mem(g, t0 + 42 * MS, 2, b + 10 * GiB, 64 * MiB, s.opt);
        if (leak > 0) bd_mem(g, t0 + 50 * MS, 1, b + 11 * GiB, leak, s.leak); /* kept: a list that grows */
        if (bNvtx) {
            char z[32];
            snprintf(z, sizeof z, "step %d", k);
            tg_nvtx(g, t0, t0 + 90 * MS, z);
        }
    }
    if (tg_close(g) != 0) {
        fprintf(stderr, "bd_job: cannot close %s\n", zPath);
        exit(1);
    }
}

