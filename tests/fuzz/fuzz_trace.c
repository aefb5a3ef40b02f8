/* Fuzz target (structure-aware): a trace built row by row from the input, then every reader run on it. */
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The first byte chooses read-only analysis (bit 0); the rest is the trace-building program. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *zPath = vt_fuzz_scratch("trace.db");
    unsigned flags = size ? data[0] : 0;
    if (size) data++, size--;
    if (vt_fuzz_build(data, size, zPath, 0) == 0) vt_fuzz_read_all(zPath, flags);
    vt_fuzz_scratch("trace.db"); /* remove the files again */
    return 0;
}
