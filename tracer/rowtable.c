/* The trace tables rows are written to: each one's INSERT statement and column types, row binding, multi-row statements. */
#include "rowtable.h"

#include "vramtrace/compact.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TXT(i) (1u << (i))

const struct vt__table_spec vt__aTable[VT_T__COUNT] = {
    [VT_T_STRING] = {"string", "INSERT INTO string(id, value) VALUES(?1,?2)", 2, TXT(1), 0, 0, 0, 0},
    [VT_T_DEVICE] = {"device",
                     "INSERT OR IGNORE INTO device(id, name, uuid, total_bytes, cc_major, cc_minor,"
                     " sm_count, pci_bus, pci_device, global_memory_bandwidth_kbps)"
                     " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)",
                     10, TXT(1) | TXT(2), 0, 0, 0, 0},
    [VT_T_DEVICE_HOST] = {"device",
                          "INSERT OR REPLACE INTO device(id, name, uuid, total_bytes, cc_major,"
                          " cc_minor, sm_count, pci_bus, pci_device, global_memory_bandwidth_kbps)"
                          " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)",
                          10, TXT(1) | TXT(2), 0, 0, 0, 0},
    [VT_T_STACK] = {"stack", "INSERT OR IGNORE INTO stack(id, hash, depth) VALUES(?1,?2,?3)", 3, 0, 0, 0, 0, 0},
    [VT_T_FRAME] = {"frame",
                    "INSERT OR IGNORE INTO frame(stack_id, idx, kind, pc, function_id, file_id, line,"
                    " module_id) VALUES(?1,?2,?3,?4,?5,?6,?7,?8)",
                    8, 0, 0, 0, 0, 0},
    [VT_T_API_CALL] = {"api_call",
                       "INSERT INTO api_call(api, correlation, t, dur, thread, device, status,"
                       " bytes, ptr, src, dst, stream, stack_id)"
                       " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13)",
                       13, 0, 3, 4, 1 + VT_CT_api_call, 0},
    [VT_T_MEMORY_EVENT] = {"memory_event",
                           "INSERT INTO memory_event(t, op, mem_kind, address, bytes, device,"
                           " context, stream, correlation, api, is_async, pool_type, pool_address,"
                           " pool_threshold, pool_size, pool_used, pc, thread, stack_id, source_id,"
                           " call_dt, call_dur, call_sig, call_id)"
                           " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,"
                           "?18,?19,?20,?21,?22,?23,?24)",
                           24, 0, 1, 0, 0, 21},
    [VT_T_OOM_EVENT] = {"oom_event",
                        "INSERT INTO oom_event(t, api, correlation, device, bytes, status,"
                        " free_bytes, total_bytes, thread, stack_id)"
                        " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)",
                        10, 0, 1, 0, 0, 0},
    [VT_T_MEMCPY] = {"memcpy",
                     "INSERT INTO memcpy(t, dur, device, context, stream, correlation, copy_kind,"
                     " src_kind, dst_kind, bytes, is_async, src_device, dst_device, src, dst,"
                     " graph_id, graph_node_id, call_dt, call_dur, call_sig, call_id)"
                     " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21)",
                     21, 0, 1, 2, 1 + VT_CT_memcpy, 18},
    [VT_T_MEMSET] = {"memset",
                     "INSERT INTO memset(t, dur, device, context, stream, correlation, bytes,"
                     " value, mem_kind, is_async, dst, graph_id, graph_node_id, call_dt, call_dur, call_sig, call_id)"
                     " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17)",
                     17, 0, 1, 2, 1 + VT_CT_memset, 14},
    [VT_T_KERNEL] = {"kernel",
                     "INSERT INTO kernel(t, dur, device, context, stream, correlation, name_id,"
                     " grid_x, grid_y, grid_z, block_x, block_y, block_z, static_smem,"
                     " dynamic_smem, registers, graph_id, graph_node_id, args_scanned)"
                     " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19)",
                     19, 0, 1, 2, 1 + VT_CT_kernel, 0},
    [VT_T_BUFFER_USE] = {"buffer_use",
                         "INSERT INTO buffer_use(correlation, kind, address, t, device)"
                         " VALUES(?1,?2,?3,?4,?5)",
                         5, 0, 4, 0, 0, 0},
    [VT_T_NVTX_RANGE] = {"nvtx_range",
                         "INSERT INTO nvtx_range(t, dur, kind, name_id, domain_id, thread, depth,"
                         " end_thread) VALUES(?1,?2,?3,?4,?5,?6,?7,?8)",
                         8, 0, 1, 2, 0, 0},
    [VT_T_SYNC_EVENT] = {"sync_event",
                         "INSERT INTO sync_event(t, dur, type, device, context, stream,"
                         " correlation, event, status) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9)",
                         9, 0, 1, 2, 0, 0},
    [VT_T_POOL_EVENT] = {"pool_event",
                         "INSERT INTO pool_event(t, op, device, pool_type, address, threshold, size,"
                         " used, correlation) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9)",
                         9, 0, 1, 0, 0, 0},
    [VT_T_DROPPED] = {"dropped",
                      "INSERT INTO dropped(t, source, what, count, device, context, stream)"
                      " VALUES(?1,?2,?3,?4,?5,?6,?7)",
                      7, TXT(2), 1, 0, 0, 0},
    [VT_T_OVERHEAD] = {"overhead",
                       "INSERT INTO overhead(source, kind, t, dur, object_kind, object_id, count)"
                       " VALUES(?1,?2,?3,?4,?5,?6,?7)",
                       7, TXT(0) | TXT(1), 3, 4, 0, 0},
    [VT_T_META] = {"meta", "INSERT OR REPLACE INTO meta(key, value) VALUES(?1,?2)", 2,
                   TXT(0) | TXT(1), 0, 0, 0, 0},
    [VT_T_MODULE] = {"module",
                     "INSERT OR IGNORE INTO module(path_id, build_id, file_bytes, mtime_ns)"
                     " VALUES(?1,?2,?3,?4)",
                     4, TXT(1), 0, 0, 0, 0},
    [VT_T_KERNEL_NAME] = {"kernel_name",
                          "INSERT OR IGNORE INTO kernel_name(name_id, demangled_id, short_id) VALUES(?1,?2,?3)",
                          3, 0, 0, 0, 0, 0},
    [VT_T_KERNEL_SUMMARY] = {"kernel_summary",
                             "INSERT INTO kernel_summary(t, dur, device, name_id, count, busy_ns, min_ns, max_ns)"
                             " VALUES(?1,?2,?3,?4,?5,?6,?7,?8)",
                             8, 0, 1, 2, 0, 0},
#define PARTS(name, SIG, OWN, zCols)                                                                       \
    [VT_T_BLOCK_##name] = {#name "_block", VT__BLOCK_INSERT(name), 3, 0, 0, 0, 0, 0},                            \
    [VT_T_SIG_##name] = {#name "_sig", VT__SIG_INSERT(name, SIG), 1 + VT__NCOL(SIG), 0, 0, 0, 0, 0},           \
    [VT_T_ROW_##name] = {#name "_row", VT__ROW_INSERT(name, OWN), 5 + VT__NCOL(OWN), 0, 0, 0, 0, 0},
    VT_COMPACT_TABLES(PARTS)
#undef PARTS
};

/* Bind row pRow's values to parameters iFirst+1.. of s. */
void vt__row_bind(sqlite3_stmt *s, int iFirst, const struct vt__row *pRow)
{
    const struct vt__table_spec *t = &vt__aTable[pRow->table];
    int i;
    for (i = 0; i < t->nCol; i++) {
        if (pRow->nullMask & (1u << i)) sqlite3_bind_null(s, iFirst + i + 1);
        else if (t->textMask & (1u << i))
            sqlite3_bind_text(s, iFirst + i + 1, pRow->v[i].z, -1, SQLITE_STATIC);
        else sqlite3_bind_int64(s, iFirst + i + 1, pRow->v[i].i);
    }
}

void vt__row_bind_changed(sqlite3_stmt *s, int iFirst, const struct vt__row *pRow, int64_t *aVal, uint8_t *aState)
{
    int nCol = vt__aTable[pRow->table].nCol;
    for (int i = 0; i < nCol; i++) {
        if (pRow->nullMask & (1u << i)) {
            if (aState[i] != 1) {
                sqlite3_bind_null(s, iFirst + i + 1);
                aState[i] = 1;
            }
        } else if (aState[i] != 2 || aVal[i] != pRow->v[i].i) {
            sqlite3_bind_int64(s, iFirst + i + 1, pRow->v[i].i);
            aVal[i] = pRow->v[i].i;
            aState[i] = 2;
        }
    }
}

/*
 * Prepare the nRows-row form of table t's INSERT: its text up to VALUES,
 * then nRows groups of nCol anonymous parameters. Returns an SQLite code.
 */
int vt__row_prepare_multi(sqlite3 *db, const struct vt__table_spec *t, sqlite3_stmt **ppStmt, int nRows)
{
    const char *zValues = strstr(t->zInsert, " VALUES(");
    size_t nPrefix, cap, n;
    char *zSql;
    int r, c, rc;
    if (!zValues) return SQLITE_INTERNAL;
    nPrefix = (size_t)(zValues - t->zInsert);
    cap = nPrefix + 16 + (size_t)nRows * ((size_t)t->nCol * 2 + 3);
    zSql = malloc(cap);
    if (!zSql) return SQLITE_NOMEM;
    memcpy(zSql, t->zInsert, nPrefix);
    n = nPrefix + (size_t)snprintf(zSql + nPrefix, cap - nPrefix, " VALUES");
    for (r = 0; r < nRows; r++) {
        zSql[n++] = r ? ',' : ' ';
        zSql[n++] = '(';
        for (c = 0; c < t->nCol; c++) {
            if (c) zSql[n++] = ',';
            zSql[n++] = '?';
        }
        zSql[n++] = ')';
    }
    zSql[n] = '\0';
    rc = sqlite3_prepare_v3(db, zSql, (int)n, SQLITE_PREPARE_PERSISTENT, ppStmt, NULL);
    free(zSql);
    return rc;
}

int vt__row_compact_map(int t, struct vt_compact_map *pMap)
{
    const struct vt__table_spec *p = &vt__aTable[t];
    const char *azCol[VT__ROW_MAXCOL], *z = strchr(p->zInsert, '('), *zWhat = NULL;
    char aName[VT__ROW_MAXCOL][32];
    int n = 0;
    if (!p->compact || !z) return -1;
    /* the column list of "INSERT INTO name(a, b, ...) VALUES(...)" */
    for (z++; *z && *z != ')' && n < VT__ROW_MAXCOL;) {
        size_t k;
        while (*z == ' ' || *z == ',') z++;
        k = strcspn(z, ", )");
        if (!k || k >= sizeof aName[0]) return -1;
        memcpy(aName[n], z, k);
        aName[n][k] = '\0';
        azCol[n] = aName[n];
        n++;
        z += k;
    }
    if (n != p->nCol) return -1;
    return vt__compact_map(p->compact - 1, azCol, n, pMap, &zWhat);
}

int vt__row_compact(struct vt_compact *c, const struct vt_compact_map *pMap, const struct vt__row *pRow, struct vt__row *aOut)
{
    struct vt_compact_part aPart[3];
    int64_t aVal[VT__ROW_MAXCOL];
    int n;
    for (int i = 0; i < vt__aTable[pRow->table].nCol; i++) aVal[i] = pRow->v[i].i;
    n = vt__compact_add(c, pMap, aVal, pRow->nullMask, aPart);
    for (int p = 0; p < n; p++) {
        aOut[p].table = VT__T_PART(pMap->iTab, aPart[p].kind);
        aOut[p].nullMask = aPart[p].nullMask | (uint32_t)aPart[p].bNext; /* the next id: SQLite's own rowid, no search */
        for (int i = 0; i < aPart[p].nCol; i++) aOut[p].v[i].i = aPart[p].a[i];
    }
    return n;
}

int vt__row_is_event(int t)
{
    return t < VT_T_BLOCK_kernel || (t - VT_T_BLOCK_kernel) % 3 == VT_CP_ROW;
}

void vt__row_to_stored(struct vt__row *pRow, int64_t base)
{
    const struct vt__table_spec *t = &vt__aTable[pRow->table];
    if (!t->timeCol) return;
    if (pRow->nullMask & (1u << (t->timeCol - 1))) { /* no start: no duration either */
        if (t->endCol) pRow->nullMask |= 1u << (t->endCol - 1);
        return;
    }
    if (t->endCol && !(pRow->nullMask & (1u << (t->endCol - 1))))
        pRow->v[t->endCol - 1].i =
            (int64_t)((uint64_t)pRow->v[t->endCol - 1].i - (uint64_t)pRow->v[t->timeCol - 1].i);
    pRow->v[t->timeCol - 1].i =
        (int64_t)((uint64_t)pRow->v[t->timeCol - 1].i - (uint64_t)base);
}


/* Whether column cA of row a and column cB of row b are both NULL or both the same value. */
static int same(const struct vt__row *a, int cA, const struct vt__row *b, int cB)
{
    int bNullA = a->nullMask >> cA & 1, bNullB = b->nullMask >> cB & 1;
    return bNullA == bNullB && (bNullA || a->v[cA].i == b->v[cB].i);
}

/* The api_call row's columns (VT_T_API_CALL's INSERT). */
enum { AC_CORR = 1, AC_T = 2, AC_DUR = 3, AC_BYTES = 7, AC_PTR, AC_SRC, AC_DST };
#define NUL(r, c) ((r)->nullMask >> (c) & 1)

int vt__fold_match(const struct vt__row *pAct, const struct vt__row *pCall)
{
    const struct vt__table_spec *t = &vt__aTable[pAct->table];
    int cCorr = pAct->table == VT_T_MEMORY_EVENT ? 8 : 5;
    if (!t->foldCol || pCall->table != VT_T_API_CALL || NUL(pAct, t->timeCol - 1) || NUL(pAct, cCorr) || NUL(pCall, AC_CORR) ||
        pAct->v[cCorr].i != pCall->v[AC_CORR].i)
        return 0;
    switch (pAct->table) {
    case VT_T_MEMCPY: /* bytes, src, dst: columns 9, 13, 14 */
        return same(pCall, AC_BYTES, pAct, 9) && NUL(pCall, AC_PTR) && same(pCall, AC_SRC, pAct, 13) && same(pCall, AC_DST, pAct, 14);
    case VT_T_MEMSET: /* bytes, dst: 6, 10 */
        return same(pCall, AC_BYTES, pAct, 6) && NUL(pCall, AC_PTR) && NUL(pCall, AC_SRC) && same(pCall, AC_DST, pAct, 10);
    case VT_T_MEMORY_EVENT: /* op, address, bytes: 1, 3, 4 */
        return NUL(pCall, AC_SRC) && NUL(pCall, AC_DST) && same(pCall, AC_PTR, pAct, 3) &&
               ((pAct->v[1].i == VT_MEMOP_ALLOC && same(pCall, AC_BYTES, pAct, 4)) ||
                (pAct->v[1].i == VT_MEMOP_FREE && NUL(pCall, AC_BYTES)));
    default: return 0;
    }
}

int vt__row_fold(struct vt_compact *c, const struct vt_compact_map *pCallMap, struct vt__row *pAct, const struct vt__row *pCall,
                 struct vt__row *pSig)
{
    const struct vt__table_spec *t = &vt__aTable[pAct->table];
    int f = t->foldCol - 1, n;
    int64_t aVal[VT__ROW_MAXCOL], sig, id;
    struct vt_compact_part part;
    for (int i = 0; i < vt__aTable[VT_T_API_CALL].nCol; i++) aVal[i] = pCall->v[i].i;
    n = vt__compact_fold(c, pCallMap, aVal, pCall->nullMask, &sig, &id, &part);
    if (n) {
        pSig->table = VT__T_PART(VT_CT_api_call, VT_CP_SIG);
        pSig->nullMask = part.nullMask;
        for (int i = 0; i < part.nCol; i++) pSig->v[i].i = part.a[i];
    }
    pAct->nullMask &= ~((uint32_t)((1u << VT_CALL_FOLD_NCOL) - 1) << f);
    /* call_dt: the difference wraps like the clock (as the compactor's dt) */
    if (NUL(pCall, AC_T)) pAct->nullMask |= 1u << f;
    else pAct->v[f].i = (int64_t)((uint64_t)pCall->v[AC_T].i - (uint64_t)pAct->v[t->timeCol - 1].i);
    if (NUL(pCall, AC_DUR)) pAct->nullMask |= 1u << (f + 1);
    else pAct->v[f + 1].i = pCall->v[AC_DUR].i;
    pAct->v[f + 2].i = sig;
    pAct->v[f + 3].i = id;
    return n;
}
