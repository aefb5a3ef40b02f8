/* Offline symbolization of native frames: module file, build id and offset to function, file and line (libdw). */
#include "read.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#ifdef VT_HAVE_LIBDW
#include <elfutils/libdwfl.h>
#endif

#include "util/text.h"

/* One module file as opened for symbolization. */
struct symmod {
    char *zPath;
#ifdef VT_HAVE_LIBDW
    Dwfl *pDwfl;      /* NULL: the file could not be read */
    Dwfl_Module *pMod;
    Dwarf_Addr base;  /* where libdw placed the module: offsets are relative to it */
#endif
    char zBuildId[80]; /* the file's GNU build id in hex, "" when it has none */
};

/*
 * The process's symbolizer: the modules opened so far (a command reads few). One lock for all
 * of it: analyze reads several traces on several threads, and a libdw session is not to be
 * shared between threads; what a lookup returns stays valid while its module is open.
 */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    char *zDebugDir;
    struct symmod *a;
    int n;
} sym;

int vt__sym_debug_dir(const char *zDir)
{
    char *z = zDir ? vt__strdupf("%s", zDir) : NULL;
    if (zDir && !z) return -1;
    pthread_mutex_lock(&g_mu);
    free(sym.zDebugDir);
    sym.zDebugDir = z;
    pthread_mutex_unlock(&g_mu);
    return 0;
}

int vt__sym_available(void)
{
#ifdef VT_HAVE_LIBDW
    return 1;
#else
    return 0;
#endif
}

#ifdef VT_HAVE_LIBDW
/* Open zPath (with its debug file, found by build id or debug link) into m. 0, or -1 out of memory. */
static int symmod_open(struct symmod *m, const char *zPath)
{
    static char *zSearch;
    static Dwfl_Callbacks cb;
    const unsigned char *aBits = NULL;
    GElf_Addr vaddr;
    int nBits;
    /* the debug file search path: --debug-dir first, then beside the file and /usr/lib/debug */
    free(zSearch);
    zSearch = vt__strdupf("%s%s-:.debug:/usr/lib/debug", sym.zDebugDir ? sym.zDebugDir : "", sym.zDebugDir ? ":" : "");
    if (!zSearch) return -1;
    cb.find_elf = dwfl_build_id_find_elf;
    cb.find_debuginfo = dwfl_standard_find_debuginfo;
    cb.section_address = dwfl_offline_section_address;
    cb.debuginfo_path = &zSearch;
    m->pDwfl = dwfl_begin(&cb);
    if (!m->pDwfl) return -1;
    m->pMod = dwfl_report_offline(m->pDwfl, zPath, zPath, -1);
    if (dwfl_report_end(m->pDwfl, NULL, NULL) != 0 || !m->pMod) {
        dwfl_end(m->pDwfl);
        m->pDwfl = NULL;
        return 0;
    }
    dwfl_module_info(m->pMod, NULL, &m->base, NULL, NULL, NULL, NULL, NULL);
    nBits = dwfl_module_build_id(m->pMod, &aBits, &vaddr);
    for (int i = 0; i < nBits && i < (int)sizeof m->zBuildId / 2 - 1; i++)
        snprintf(m->zBuildId + 2 * i, 3, "%02x", aBits[i]);
    return 0;
}
#endif

/* The module file zPath, opened on first use; NULL when out of memory. */
static struct symmod *symmod_get(const char *zPath)
{
    struct symmod *aNew, *m;
    for (int i = 0; i < sym.n; i++)
        if (!strcmp(sym.a[i].zPath, zPath)) return &sym.a[i];
    aNew = realloc(sym.a, sizeof *aNew * (size_t)(sym.n + 1));
    if (!aNew) return NULL;
    sym.a = aNew;
    m = &aNew[sym.n];
    memset(m, 0, sizeof *m);
    if (!(m->zPath = vt__strdupf("%s", zPath))) return NULL;
#ifdef VT_HAVE_LIBDW
    if (symmod_open(m, zPath) != 0) {
        free(m->zPath);
        return NULL;
    }
#endif
    sym.n++;
    return m;
}

/* vt__sym_resolve with the lock held. */
static int resolve_locked(const char *zModule, const char *zBuildId, uint64_t pc, struct vt_symbol *pOut)
{
    struct symmod *m;
    if (!(m = symmod_get(zModule))) return -1;
#ifdef VT_HAVE_LIBDW
    {
        Dwarf_Addr addr = m->base + pc - 1; /* a return address: the call is the byte before */
        Dwfl_Line *pLine;
        const char *zFn, *zFile;
        int line = 0;
        if (!m->pDwfl) return VT_SYM_UNKNOWN;
        if (zBuildId && *zBuildId && m->zBuildId[0] && strcmp(zBuildId, m->zBuildId) != 0) return VT_SYM_MISMATCH;
        zFn = dwfl_module_addrname(m->pMod, addr);
        pLine = dwfl_module_getsrc(m->pMod, addr);
        zFile = pLine ? dwfl_lineinfo(pLine, NULL, &line, NULL, NULL, NULL) : NULL;
        if (!zFn && !zFile) return VT_SYM_UNKNOWN;
        pOut->zFunction = zFn;
        pOut->zFile = zFile;
        pOut->line = zFile ? line : 0;
        return VT_SYM_OK;
    }
#else
    (void)zBuildId;
    (void)pc;
    (void)pOut;
    return VT_SYM_UNKNOWN;
#endif
}

int vt__sym_resolve(const char *zModule, const char *zBuildId, uint64_t pc, struct vt_symbol *pOut)
{
    int rc;
    memset(pOut, 0, sizeof *pOut);
    if (!zModule || !*zModule || pc == 0) return VT_SYM_UNKNOWN;
    pthread_mutex_lock(&g_mu);
    rc = resolve_locked(zModule, zBuildId, pc, pOut);
    pthread_mutex_unlock(&g_mu);
    return rc;
}

void vt__sym_reset(void)
{
    pthread_mutex_lock(&g_mu);
    for (int i = 0; i < sym.n; i++) {
#ifdef VT_HAVE_LIBDW
        if (sym.a[i].pDwfl) dwfl_end(sym.a[i].pDwfl);
#endif
        free(sym.a[i].zPath);
    }
    free(sym.a);
    free(sym.zDebugDir);
    memset(&sym, 0, sizeof sym);
    pthread_mutex_unlock(&g_mu);
}
