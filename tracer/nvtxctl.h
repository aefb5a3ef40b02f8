/* Internal: control messages from the traced job to the tracer, as NVTX marks, whatever CUPTI does with NVTX. */
#ifndef VT_TRACER_NVTXCTL_H
#define VT_TRACER_NVTXCTL_H

#include <stddef.h>
#include <stdint.h>

/*
 * NVTX_INJECTION64_PATH names libvramtrace.so, so every NVTX instance in the
 * process (each library that compiled NVTX's header-only implementation:
 * PyTorch's among them) calls the library's InitializeInjectionNvtx2 with its
 * export-table function, which the library forwards to CUPTI's. Here that
 * instance is handed to CUPTI behind a proxy: through it CUPTI sees the
 * instance's function tables unchanged except the nvtxMarkA slot, which is a
 * slot of the proxy's (CUPTI attaches lazily, once its own NVTX use is set
 * up, and writes its handlers then, or never). The instance's real nvtxMarkA
 * slot holds a handler of this module's, set once: a mark whose text starts
 * with VT_NVTXCTL_PREFIX is a control message for the tracer, handed to
 * xControl without the prefix and never forwarded (it annotates nothing of
 * the job); any other mark goes on to what CUPTI put in the proxy's slot, if
 * anything. So the channel works whenever NVTX is injected, with or without a
 * CUPTI subscription, and CUPTI records the job's own marks as before.
 *
 * At most VT_NVTXCTL_MAX_INSTANCES instances get the channel; later ones are
 * passed to CUPTI as they are.
 */
#define VT_NVTXCTL_PREFIX "vramtrace-cupti:"
#define VT_NVTXCTL_MAX_INSTANCES 8

/*
 * NVTX's export-table types and ids this module uses (nvtx3/nvtxDetail/nvtxTypes.h:
 * NvtxGetExportTableFunc_t, NvtxExportTableCallbacks, NvtxFunctionTable, NVTX_ETID_CALLBACKS,
 * NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_MarkA), declared here so the tracer includes no NVTX
 * header (NVTX's headers define functions); tests/test_nvtxctl.c checks they match.
 */
typedef void (*vt__nvtx_fn)(void);            /* NvtxFunctionPointer */
typedef vt__nvtx_fn **vt__nvtx_table;         /* NvtxFunctionTable: pointers to the slots */
typedef const void *(*vt__nvtx_get_table)(uint32_t exportTableId); /* NvtxGetExportTableFunc_t */
typedef struct {
    size_t struct_size;
    int (*GetModuleFunctionTable)(int callbackModule, vt__nvtx_table *pOutTable, unsigned int *pOutSize);
} vt__nvtx_callbacks;                          /* NvtxExportTableCallbacks */
#define VT_NVTX_ETID_CALLBACKS 1
#define VT_NVTX_CB_MODULE_CORE 1
#define VT_NVTX_CBID_CORE_MarkA 2

/*
 * Attach one NVTX instance (its export-table function, as NVTX passes it to
 * InitializeInjectionNvtx2): xInit (CUPTI's InitializeInjectionNvtx2) is
 * called with the proxy, and when it accepts (non-zero) the instance's
 * nvtxMarkA slot gets the control handler, which calls xControl(zMessage)
 * for each control mark (on the marking thread; xControl must not be NULL).
 * Returns what xInit returned. Thread-safe; the proxies live as long as the
 * process.
 */
int vt__nvtxctl_attach(const void *pGetExportTable, int (*xInit)(const void *pGetExportTable),
                       void (*xControl)(const char *zMessage));

#endif
