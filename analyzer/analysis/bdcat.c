/* The breakdown's categories: their keys (JSON), names (text) and whether they grow with the batch. */
#include "analysis.h"

static const struct {
    const char *zKey, *zName;
    int bScales;
} aCat[VT_CAT_N] = {
    [VT_CAT_PARAM] = {"parameters", "parameters", 0},
    [VT_CAT_GRAD] = {"gradients", "gradients", 0},
    [VT_CAT_OPT] = {"optimizer_state", "optimizer state", 0},
    [VT_CAT_ACT] = {"activations", "activations kept for backward", 1},
    [VT_CAT_TRANSIENT] = {"activations_or_temporaries", "activations or temporaries", 1},
    [VT_CAT_TEMP] = {"temporaries", "temporaries and workspaces", 1},
    [VT_CAT_STATE] = {"other_state", "other memory kept across steps", 0},
    [VT_CAT_CACHE] = {"allocator_cache", "allocator cache (reserved, not allocated)", 0},
    [VT_CAT_NCCL] = {"nccl", "NCCL buffers", 0},
    [VT_CAT_CUBLAS] = {"cublas_workspace", "cuBLAS/cuBLASLt workspaces", 0},
    [VT_CAT_CUDNN] = {"cudnn_workspace", "cuDNN workspaces", 0},
    [VT_CAT_GRAPH] = {"cuda_graph_pools", "CUDA graph pools", 0},
    [VT_CAT_LIB] = {"library", "other library", 0},
    [VT_CAT_CONTEXT] = {"cuda_context", "CUDA context and driver", 0},
    [VT_CAT_OTHERS] = {"other_processes", "other processes", 0},
    [VT_CAT_CTXOTHERS] = {"cuda_context_or_other_processes", "CUDA context, driver and other processes", 0},
    [VT_CAT_BEFORE] = {"before_trace", "allocated before the trace", 0},
    [VT_CAT_UNKNOWN] = {"unknown", "unknown", 0},
};

const char *vt__cat_key(int cat)
{
    return cat >= 0 && cat < VT_CAT_N ? aCat[cat].zKey : "unknown";
}

const char *vt__cat_name(int cat)
{
    return cat >= 0 && cat < VT_CAT_N ? aCat[cat].zName : "unknown";
}

int vt__cat_scales(int cat)
{
    return cat >= 0 && cat < VT_CAT_N && aCat[cat].bScales;
}
