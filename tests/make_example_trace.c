/* Writes tests/data/example-train.db: a synthetic PyTorch-like run with the problems vramtrace finds. */
#include <stdio.h>
#include <stdlib.h>

#include "tracegen.h"
#include "vramtrace/schema.h"

/*
 * The story, at tensor level (as `vramtrace record --tensors` records it), device 0 with 80 GiB:
 *   - a model of 2 GiB of weights and 4 GiB of optimizer state, allocated once and kept;
 *   - 6 training iterations (NVTX "train" > "iter N"): batch copied host-to-device from
 *     pageable memory, 6 GiB of activations allocated by forward kernels and freed after
 *     backward and the optimizer step; each iteration also keeps a 16 MiB loss tensor alive
 *     from train.py:57 (losses.append(loss): the graph is retained, a leak);
 *   - a validation phase (NVTX "validation") run without torch.no_grad(): activations of each
 *     batch are kept (outputs collected with their graph) so live memory grows batch by batch
 *     until torch.cat(outputs) asks for 32 GiB with about 25 GiB free on the device.
 * Used by the README's first command and analyzed in CI (test_example_trace).
 */
int main(int argc, char **argv)
{
    const char *zOut = argc > 1 ? argv[1] : "example-train.db";
    const int64_t base = (int64_t)0x7f2000000000;
    int64_t t = 1000 * MS, next = base, weights, optim, lossSite, actSite, valSite, dataSite;
    struct tg *g = tg_open(zOut);
    int it, b, k;

    if (!g) {
        fprintf(stderr, "make_example_trace: cannot create %s\n", zOut);
        return 1;
    }
    tg_meta(g, "cmdline", "python train.py --epochs 1 --batch-size 256");
    tg_meta(g, "hostname", "example-host");
    tg_meta(g, "rank", "0");
    tg_meta(g, "tracer_version", "example (synthetic trace)");
    tg_meta(g, "synthetic", "1");
    tg_device(g, 0, "NVIDIA H100 80GB HBM3 (synthetic)", 80 * GiB);
    lossSite = tg_stack(g, "train.py", 57, "train_one_epoch");
    actSite = tg_stack(g, "model.py", 31, "forward");
    valSite = tg_stack(g, "train.py", 88, "validate");
    dataSite = tg_stack(g, "train.py", 49, "train_one_epoch");
    weights = tg_stack(g, "train.py", 20, "main");
    optim = tg_stack(g, "train.py", 24, "main");

    tg_alloc(g, t, 0, VT_MEMKIND_DEVICE, next, 2 * GiB, weights);
    next += 2 * GiB;
    tg_alloc(g, t + 5 * MS, 0, VT_MEMKIND_DEVICE, next, 4 * GiB, optim);
    int64_t optimAddr = next, weightsAddr = next - 2 * GiB;
    next += 4 * GiB;
    t += 50 * MS;

    int64_t trainStart = t;
    for (it = 0; it < 6; it++) {
        char zIter[32];
        int64_t itStart = t, act[6], batch = next;
        tg_alloc(g, t, 0, VT_MEMKIND_DEVICE, batch, 192 * MiB, dataSite);
        next += 192 * MiB;
        /* pageable copy: 192 MiB at ~6 GB/s */
        tg_memcpy(g, t + 1 * MS, t + 33 * MS, VT_COPY_HTOD, VT_MEMKIND_PAGEABLE, VT_MEMKIND_DEVICE,
                  192 * MiB, 0x55d000000000, batch);
        t += 35 * MS;
        for (k = 0; k < 6; k++) {
            act[k] = next;
            next += GiB;
            tg_alloc(g, t, 0, VT_MEMKIND_DEVICE, act[k], GiB, actSite);
            int64_t c = tg_kernel(g, t + 1 * MS, t + 9 * MS, "void at::native::conv2d_fwd_kernel<float>(...)");
            tg_use(g, t + 1 * MS, c, act[k]);
            tg_use(g, t + 1 * MS, c, weightsAddr);
            t += 10 * MS;
        }
        for (k = 5; k >= 0; k--) {
            int64_t c = tg_kernel(g, t, t + 12 * MS, "void at::native::conv2d_backward_kernel<float>(...)");
            tg_use(g, t, c, act[k]);
            t += 13 * MS;
            tg_free(g, t, 0, VT_MEMKIND_DEVICE, act[k], GiB);
        }
        int64_t c = tg_kernel(g, t, t + 5 * MS, "void at::native::multi_tensor_apply_kernel<AdamFunctor>(...)");
        tg_use(g, t, c, optimAddr);
        t += 6 * MS;
        tg_alloc(g, t, 0, VT_MEMKIND_DEVICE, next, 16 * MiB, lossSite); /* kept: the leak */
        next += 16 * MiB;
        t += 1 * MS;
        tg_free(g, t, 0, VT_MEMKIND_DEVICE, batch, 192 * MiB);
        t += 2 * MS;
        snprintf(zIter, sizeof zIter, "iter %d", it);
        tg_nvtx(g, itStart, t, zIter);
    }
    tg_nvtx(g, trainStart, t, "train");
    t += 20 * MS;

    int64_t valStart = t;
    for (b = 0; b < 8; b++) {
        int64_t batch = next;
        tg_alloc(g, t, 0, VT_MEMKIND_DEVICE, batch, 192 * MiB, dataSite);
        next += 192 * MiB;
        tg_memcpy(g, t + 1 * MS, t + 33 * MS, VT_COPY_HTOD, VT_MEMKIND_PAGEABLE, VT_MEMKIND_DEVICE,
                  192 * MiB, 0x55d000000000, batch);
        t += 35 * MS;
        for (k = 0; k < 6; k++) { /* forward only, activations kept (no torch.no_grad) */
            tg_alloc(g, t, 0, VT_MEMKIND_DEVICE, next, GiB, valSite);
            int64_t c = tg_kernel(g, t + 1 * MS, t + 9 * MS, "void at::native::conv2d_fwd_kernel<float>(...)");
            tg_use(g, t + 1 * MS, c, next);
            tg_use(g, t + 1 * MS, c, weightsAddr);
            next += GiB;
            t += 10 * MS;
        }
        tg_free(g, t, 0, VT_MEMKIND_DEVICE, batch, 192 * MiB);
        t += 2 * MS;
        if (b == 7) {
            /* torch.cat(outputs): 32 GiB asked with about 25 GiB left (80 GiB minus 54.1 GiB
             * live minus the CUDA context): real demand, not fragmentation */
            tg_oom(g, t, 0, 32 * GiB, 25 * GiB + 300 * MiB, 80 * GiB, valSite);
            t += 1 * MS;
        }
    }
    tg_nvtx(g, valStart, t, "validation");
    if (tg_close(g) != 0) {
        fprintf(stderr, "make_example_trace: writing %s failed\n", zOut);
        return 1;
    }
    printf("wrote %s\n", zOut);
    return 0;
}
