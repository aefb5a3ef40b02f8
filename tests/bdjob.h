/* Test fixture: synthetic PyTorch training jobs of known make-up (what each allocation is), for the breakdown and diff tests. */
#ifndef VT_TESTS_BDJOB_H
#define VT_TESTS_BDJOB_H

#include <stdint.h>

#include "tracegen.h"

/* The stacks a PyTorch training job's allocations carry (Python frames over native ones). */
struct bd_stacks {
    int64_t param, fwd, eng, acc, opt, zero, cublas, nccl, lib, seg, leak;
    int64_t ownopt; /* the step of an optimizer the program defines (torch.optim's wrapper, no torch/optim/ code of its own) */
};
/* Their frames in g's stack table. */
void bd_stacks(struct tg *g, struct bd_stacks *s);
/* A memory_event row on device 0: op 1 alloc, 2 free; stack -1 none. */
void bd_mem(struct tg *g, int64_t ts, int op, int64_t addr, int64_t bytes, int64_t stack);
/* The CUDA runtime's own 2 MiB at context creation: no API call, no stack. */
void bd_runtime_alloc(struct tg *g, int64_t ts);
/*
 * A training job at tensor level (one CUDA allocation per tensor) written to zPath (zRank, zCmd:
 * meta, NULL for none / the default): parameters 4 x 64 MiB (Module._apply), cuBLAS 32 MiB, NCCL
 * 128 MiB, a library's 16 MiB, the runtime's 2 MiB; each of 4 steps: zero_grad frees the
 * gradients, the forward makes 4 activations of act bytes and a 128 MiB temporary freed at once,
 * the backward a 256 MiB gradient of an activation (engine) and 4 parameter gradients of 64 MiB
 * (AccumulateGrad), then frees the activations from the engine's thread and that gradient; the
 * first optimizer step makes 8 x 64 MiB of Adam state and every step a 64 MiB temporary. bNvtx:
 * "step N" ranges; leak > 0: each step also keeps leak bytes from metrics.py:12 (a planted leak).
 * The peak is in a later step, just before the backward frees an activation: 2 + 256 + 32 + 128
 * + 16 + 512 + 4 act + 256 + 256 MiB (and the leak kept so far).
 */
void bd_job(const char *zPath, const char *zRank, int64_t act, int bNvtx, const char *zCmd, int64_t leak);

#endif
