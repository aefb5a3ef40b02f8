/* Fuzz target (raw bytes): the input is the trace file itself — damaged, truncated or foreign databases. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *zPath = vt_fuzz_scratch("raw.db");
    FILE *f = fopen(zPath, "wb");
    if (!f) return 0;
    if (size && fwrite(data, 1, size, f) != size) {
        fclose(f);
        return 0;
    }
    if (fclose(f) == 0) vt_fuzz_read_all(zPath, 0);
    vt_fuzz_scratch("raw.db");
    return 0;
}
