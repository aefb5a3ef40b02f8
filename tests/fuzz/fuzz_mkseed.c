/* Turn structure-aware fuzz inputs into small trace files: seeds for the raw-database target. */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_common.h"

/* usage: fuzz_mkseed INPUT OUTPUT.db — OUTPUT is built with 512-byte pages to stay small. */
int main(int argc, char **argv)
{
    static unsigned char aBuf[1 << 20];
    size_t n;
    FILE *f;
    if (argc != 3) {
        fprintf(stderr, "usage: fuzz_mkseed INPUT OUTPUT.db\n");
        return 2;
    }
    f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    n = fread(aBuf, 1, sizeof aBuf, f);
    fclose(f);
    remove(argv[2]);
    if (n == 0 || vt_fuzz_build(aBuf + 1, n - 1, argv[2], 512) != 0) {
        fprintf(stderr, "fuzz_mkseed: cannot build %s\n", argv[2]);
        return 1;
    }
    return 0;
}
