/* Native unwinding for site capture: per-thread cache of DWARF CFI rules on x86-64, backtrace() as the reference and fallback. */
#include "unwind.h"

#include <execinfo.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define FALLBACK_SLACK 8 /* frames an interposed backtrace() may add in front */
#define MAX_FRAMES 256

static _Atomic unsigned long long nFast, nFallback;

/*
 * backtrace() normalized to vt__unwind's contract: frames before the return
 * address into our caller (ours, and a sanitizer's interceptor) are dropped.
 */
__attribute__((noinline)) static int walk_backtrace(void **aPc, int nMax, void *pRet)
{
    void *aRaw[MAX_FRAMES + FALLBACK_SLACK + 2];
    int nRaw, i, n = 0;
    if (nMax > MAX_FRAMES) nMax = MAX_FRAMES;
    nRaw = backtrace(aRaw, nMax + FALLBACK_SLACK + 2);
    for (i = 0; i < nRaw && i < FALLBACK_SLACK + 2 && aRaw[i] != pRet; i++) {
    }
    if (i == nRaw || aRaw[i] != pRet) i = 2; /* not found: assume walk_backtrace + vt__unwind */
    for (; i < nRaw && n < nMax; i++) aPc[n++] = aRaw[i];
    atomic_fetch_add_explicit(&nFallback, 1, memory_order_relaxed);
    return n;
}

#if defined(__x86_64__) && defined(__linux__)

/* libgcc's FDE lookup (exported by libgcc_s since GCC 3.0; not in a public header). */
struct dwarf_eh_bases {
    void *tbase;
    void *dbase;
    void *func;
};
extern const void *_Unwind_Find_FDE(void *pc, struct dwarf_eh_bases *bases);

enum { REG_RBP = 6, REG_RSP = 7, REG_RA = 16 };

/* How a register is recovered. */
enum { HOW_SAME = 0, HOW_OFFSET = 1, HOW_UNDEF = 2 };

/* Outcome of deriving a rule. */
enum { RULE_OK = 0, RULE_NOFDE = 1, RULE_BAD = 2 };

/* The unwinding rule at one address: CFA = reg + off; RA and RBP at CFA + their offsets. */
struct rule {
    int32_t cfaOff;
    int16_t rbpOff, raOff;
    uint8_t cfaReg, rbpHow, raHow, status;
};

struct slot {
    uintptr_t pc; /* 0: empty */
    struct rule r;
};

#define CACHE_SLOTS 1024
#define STATE_STACK 8

static __thread struct slot tCache[CACHE_SLOTS];
static __thread uintptr_t tStackLo, tStackHi; /* this thread's stack region */
static __thread int tStackState;    /* 0 not looked up, 1 known, 2 unusable */

/* Cursor over CFI bytes; bErr set on any overrun. */
struct cur {
    const uint8_t *p, *end;
    int bErr;
};

static uint64_t rd_uleb(struct cur *c)
{
    uint64_t v = 0;
    int shift = 0;
    for (;;) {
        uint8_t b;
        if (c->p >= c->end || shift > 63) {
            c->bErr = 1;
            return 0;
        }
        b = *c->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80)) return v;
    }
}

static int64_t rd_sleb(struct cur *c)
{
    uint64_t v = 0;
    int shift = 0;
    uint8_t b;
    do {
        if (c->p >= c->end || shift > 63) {
            c->bErr = 1;
            return 0;
        }
        b = *c->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40)) v |= ~(uint64_t)0 << shift;
    return (int64_t)v;
}

/* Read n raw bytes as a little-endian unsigned value. */
static uint64_t rd_fixed(struct cur *c, int n)
{
    uint64_t v = 0;
    if (c->end - c->p < n) {
        c->bErr = 1;
        return 0;
    }
    memcpy(&v, c->p, (size_t)n);
    c->p += n;
    return v;
}

/* Read a pointer encoded with enc (DW_EH_PE_*). bAbs: ignore the application bits (pc_range). */
static uint64_t rd_encoded(struct cur *c, uint8_t enc, const struct dwarf_eh_bases *pBases, int bAbs)
{
    const uint8_t *pField = c->p;
    uint64_t v, base = 0;
    if (enc == 0xff) {
        c->bErr = 1;
        return 0;
    }
    switch (enc & 0x0f) {
    case 0x00: v = rd_fixed(c, 8); break;
    case 0x01: v = rd_uleb(c); break;
    case 0x02: v = rd_fixed(c, 2); break;
    case 0x03: v = rd_fixed(c, 4); break;
    case 0x04: v = rd_fixed(c, 8); break;
    case 0x09: v = (uint64_t)rd_sleb(c); break;
    case 0x0a: v = (uint64_t)(int64_t)(int16_t)rd_fixed(c, 2); break;
    case 0x0b: v = (uint64_t)(int64_t)(int32_t)rd_fixed(c, 4); break;
    case 0x0c: v = rd_fixed(c, 8); break;
    default: c->bErr = 1; return 0;
    }
    if (bAbs) return v;
    switch (enc & 0x70) {
    case 0x00: break;
    case 0x10: base = (uint64_t)(uintptr_t)pField; break;
    case 0x20: base = (uint64_t)(uintptr_t)pBases->tbase; break;
    case 0x30: base = (uint64_t)(uintptr_t)pBases->dbase; break;
    case 0x40: base = (uint64_t)(uintptr_t)pBases->func; break;
    default: c->bErr = 1; return 0;
    }
    v += base;
    if (enc & 0x80) { /* indirect: the value is the address of the pointer */
        uint64_t w;
        memcpy(&w, (const void *)(uintptr_t)v, 8);
        v = w;
    }
    return v;
}

/* Register rules tracked while interpreting CFI. */
struct regs {
    uint64_t cfaReg;
    int64_t cfaOff;
    uint8_t rbpHow, raHow;
    int64_t rbpOff, raOff;
};

/*
 * Execute CFI instructions in c until the location passes target (FDE
 * instructions) or they end (CIE initial instructions, target 0 and loc
 * ignored). Returns 0, or -1 for anything outside the supported subset.
 */
static int run_cfi(struct cur *c, const struct regs *pInit, struct regs *r, uint64_t codeAlign,
                   int64_t dataAlign, uint8_t fdeEnc, const struct dwarf_eh_bases *pBases,
                   uint64_t loc, uint64_t target, int bFde)
{
    struct regs aStack[STATE_STACK];
    int nStack = 0;
    while (c->p < c->end && !c->bErr) {
        uint8_t op = *c->p++, lo = op & 0x3f;
        uint64_t reg = 0;
        int64_t off = 0;
        uint64_t delta = 0;
        int bAdvance = 0;
        switch (op & 0xc0) {
        case 0x40: delta = lo * codeAlign; bAdvance = 1; break;
        case 0x80: /* offset(reg, uleb * dataAlign) */
            reg = lo;
            off = (int64_t)rd_uleb(c) * dataAlign;
            goto set_offset;
        case 0xc0: /* restore(reg) */
            reg = lo;
            goto restore;
        default: break;
        }
        if ((op & 0xc0) == 0) {
            switch (op) {
            case 0x00: break;                                          /* nop */
            case 0x01: loc = rd_encoded(c, fdeEnc, pBases, 0); break; /* set_loc */
            case 0x02: delta = rd_fixed(c, 1) * codeAlign; bAdvance = 1; break;
            case 0x03: delta = rd_fixed(c, 2) * codeAlign; bAdvance = 1; break;
            case 0x04: delta = rd_fixed(c, 4) * codeAlign; bAdvance = 1; break;
            case 0x05: /* offset_extended */
                reg = rd_uleb(c);
                off = (int64_t)rd_uleb(c) * dataAlign;
                goto set_offset;
            case 0x06: reg = rd_uleb(c); goto restore;
            case 0x07: /* undefined */
                reg = rd_uleb(c);
                if (reg == REG_RA) r->raHow = HOW_UNDEF;
                else if (reg == REG_RBP) r->rbpHow = HOW_SAME; /* libgcc leaves it unchanged */
                break;
            case 0x08: /* same_value */
                reg = rd_uleb(c);
                if (reg == REG_RA) return -1;
                if (reg == REG_RBP) r->rbpHow = HOW_SAME;
                break;
            case 0x09: /* register(reg, reg2) */
                reg = rd_uleb(c);
                rd_uleb(c);
                if (reg == REG_RA || reg == REG_RBP) return -1;
                break;
            case 0x0a: /* remember_state */
                if (nStack == STATE_STACK) return -1;
                aStack[nStack++] = *r;
                break;
            case 0x0b: /* restore_state: the CFA rule is part of the state here, as in libgcc */
                if (nStack == 0) return -1;
                *r = aStack[--nStack];
                break;
            case 0x0c: /* def_cfa */
                r->cfaReg = rd_uleb(c);
                r->cfaOff = (int64_t)rd_uleb(c);
                break;
            case 0x0d: r->cfaReg = rd_uleb(c); break; /* def_cfa_register */
            case 0x0e: r->cfaOff = (int64_t)rd_uleb(c); break; /* def_cfa_offset */
            case 0x0f: return -1;                               /* def_cfa_expression */
            case 0x10:                                          /* expression(reg, block) */
            case 0x16: {                                        /* val_expression(reg, block) */
                uint64_t n;
                reg = rd_uleb(c);
                n = rd_uleb(c);
                if (reg == REG_RA || reg == REG_RBP || n > (uint64_t)(c->end - c->p)) return -1;
                c->p += n;
                break;
            }
            case 0x11: /* offset_extended_sf */
                reg = rd_uleb(c);
                off = rd_sleb(c) * dataAlign;
                goto set_offset;
            case 0x12: /* def_cfa_sf */
                r->cfaReg = rd_uleb(c);
                r->cfaOff = rd_sleb(c) * dataAlign;
                break;
            case 0x13: r->cfaOff = rd_sleb(c) * dataAlign; break; /* def_cfa_offset_sf */
            case 0x14:                                            /* val_offset */
            case 0x15:                                            /* val_offset_sf */
                reg = rd_uleb(c);
                if (op == 0x14) rd_uleb(c);
                else rd_sleb(c);
                if (reg == REG_RA || reg == REG_RBP) return -1;
                break;
            case 0x2e: rd_uleb(c); break; /* GNU_args_size */
            case 0x2f:                    /* GNU_negative_offset_extended */
                reg = rd_uleb(c);
                off = -(int64_t)rd_uleb(c) * dataAlign;
                goto set_offset;
            default: return -1;
            }
        }
        if (bAdvance) {
            if (bFde && loc + delta > target) return 0; /* the rule in force at target is final */
            loc += delta;
        }
        continue;
    set_offset:
        if (reg == REG_RA) {
            r->raHow = HOW_OFFSET;
            r->raOff = off;
        } else if (reg == REG_RBP) {
            r->rbpHow = HOW_OFFSET;
            r->rbpOff = off;
        }
        continue;
    restore:
        if (!pInit) return -1; /* restore inside a CIE's initial instructions */
        if (reg == REG_RA) {
            r->raHow = pInit->raHow;
            r->raOff = pInit->raOff;
        } else if (reg == REG_RBP) {
            r->rbpHow = pInit->rbpHow;
            r->rbpOff = pInit->rbpOff;
        }
    }
    return c->bErr ? -1 : 0;
}

/* Derive the rule at address pc from its FDE. */
static struct rule derive(uintptr_t pc)
{
    struct rule out = {0, 0, 0, 0, 0, 0, RULE_BAD};
    struct dwarf_eh_bases bases;
    const uint8_t *pFde = _Unwind_Find_FDE((void *)pc, &bases), *pCie, *pAugEnd;
    struct cur c;
    uint32_t len;
    int32_t cieOff;
    uint8_t version, fdeEnc = 0;
    const char *zAug;
    uint64_t codeAlign, pcBegin, pcRange;
    int64_t dataAlign;
    int bZ;
    struct regs init, r;

    if (!pFde) {
        out.status = RULE_NOFDE;
        return out;
    }
    /* The CIE. */
    memcpy(&len, pFde, 4);
    memcpy(&cieOff, pFde + 4, 4);
    if (len == 0xffffffffu || len < 8) return out;
    pCie = pFde + 4 - cieOff;
    memcpy(&len, pCie, 4);
    if (len == 0xffffffffu || len < 4) return out;
    c.p = pCie + 8; /* after length and CIE id */
    c.end = pCie + 4 + len;
    c.bErr = 0;
    version = (uint8_t)rd_fixed(&c, 1);
    zAug = (const char *)c.p;
    while (c.p < c.end && *c.p) c.p++;
    if (c.p >= c.end) return out;
    c.p++;
    if (version != 1 && version != 3) return out;
    if (zAug[0] && zAug[0] != 'z') return out; /* "eh" and other old augmentations */
    codeAlign = rd_uleb(&c);
    dataAlign = rd_sleb(&c);
    if (version == 1) {
        if (rd_fixed(&c, 1) != REG_RA) return out;
    } else if (rd_uleb(&c) != REG_RA) {
        return out;
    }
    bZ = zAug[0] == 'z';
    pAugEnd = c.p;
    if (bZ) {
        uint64_t n = rd_uleb(&c);
        const char *z;
        if (c.bErr || n > (uint64_t)(c.end - c.p)) return out;
        pAugEnd = c.p + n;
        for (z = zAug + 1; *z; z++) {
            if (*z == 'R') fdeEnc = (uint8_t)rd_fixed(&c, 1);
            else if (*z == 'L') rd_fixed(&c, 1);
            else if (*z == 'P') rd_encoded(&c, (uint8_t)rd_fixed(&c, 1), &bases, 0);
            else return out; /* 'S' (signal frame) and anything unknown: leave it to backtrace() */
        }
        c.p = pAugEnd;
    }
    if (c.bErr) return out;
    memset(&init, 0, sizeof init);
    init.cfaReg = 0xff;
    if (run_cfi(&c, NULL, &init, codeAlign, dataAlign, fdeEnc, &bases, 0, 0, 0)) return out;

    /* The FDE. */
    memcpy(&len, pFde, 4);
    c.p = pFde + 8;
    c.end = pFde + 4 + len;
    c.bErr = 0;
    pcBegin = rd_encoded(&c, fdeEnc, &bases, 0);
    pcRange = rd_encoded(&c, fdeEnc, &bases, 1);
    if (bZ) {
        uint64_t n = rd_uleb(&c);
        if (c.bErr || n > (uint64_t)(c.end - c.p)) return out;
        c.p += n;
    }
    if (c.bErr || pc < pcBegin || pc >= pcBegin + pcRange) return out;
    r = init;
    if (run_cfi(&c, &init, &r, codeAlign, dataAlign, fdeEnc, &bases, pcBegin, pc, 1)) return out;

    if ((r.cfaReg != REG_RSP && r.cfaReg != REG_RBP) || r.cfaOff < 8 || r.cfaOff > INT32_MAX) return out;
    if (r.raHow == HOW_OFFSET && (r.raOff < INT16_MIN || r.raOff > -8)) return out;
    if (r.raHow == HOW_SAME) return out;
    if (r.rbpHow == HOW_OFFSET && (r.rbpOff < INT16_MIN || r.rbpOff > -8)) return out;
    out.cfaReg = (uint8_t)r.cfaReg;
    out.cfaOff = (int32_t)r.cfaOff;
    out.raHow = r.raHow;
    out.raOff = (int16_t)r.raOff;
    out.rbpHow = r.rbpHow;
    out.rbpOff = (int16_t)r.rbpOff;
    out.status = RULE_OK;
    return out;
}

/* The cached rule at pc. */
static const struct rule *rule_at(uintptr_t pc)
{
    struct slot *s = &tCache[(pc * 0x9e3779b97f4a7c15ull) >> 54];
    if (s->pc != pc) {
        s->r = derive(pc);
        s->pc = pc;
    }
    return &s->r;
}

/*
 * One word of the thread's own stack, bounds already checked. Not
 * instrumented: a saved register slot of another frame is not an object the
 * sanitizer tracks.
 */
__attribute__((no_sanitize_address)) static uintptr_t stack_load(uintptr_t a)
{
    return *(const volatile uintptr_t *)a;
}

/* Find the top of this thread's stack once. Returns 1 if known. */
static int stack_known(void)
{
    if (tStackState == 0) {
        pthread_attr_t attr;
        void *pAddr = NULL;
        size_t nSize = 0;
        tStackState = 2;
        if (pthread_getattr_np(pthread_self(), &attr) == 0) {
            if (pthread_attr_getstack(&attr, &pAddr, &nSize) == 0 && pAddr && nSize) {
                tStackLo = (uintptr_t)pAddr;
                tStackHi = (uintptr_t)pAddr + nSize;
                tStackState = 1;
            }
            pthread_attr_destroy(&attr);
        }
    }
    return tStackState == 1;
}

/*
 * The cached-rule walk. Returns the number of frames, or -1 when the walk
 * must be redone with backtrace(). always_inline: the register snapshot must
 * be of vt__unwind's own frame.
 */
static inline __attribute__((always_inline)) int walk_fast(void **aPc, int nMax)
{
    uintptr_t pc, sp, bp, lo, hi;
    int n = 0, bFirst = 1;
    if (!stack_known()) return -1;
    __asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
                     : "=r"(pc), "=r"(sp), "=r"(bp));
    lo = sp;
    hi = tStackHi;
    /* Not on the thread's stack (a coroutine's, an alternate signal stack): everything between
     * sp and the top would not be known to be mapped. */
    if (sp < tStackLo || sp >= hi) return -1;
    while (n < nMax) {
        const struct rule *r = rule_at(bFirst ? pc : pc - 1);
        uintptr_t cfa, ra, a;
        if (r->status != RULE_OK) return -1; /* no FDE (JIT code, a signal trampoline) or unsupported */
        cfa = (r->cfaReg == REG_RSP ? sp : bp) + (uintptr_t)(intptr_t)r->cfaOff;
        if (cfa <= sp || cfa > hi) return -1;
        if (r->raHow == HOW_UNDEF) break; /* the outermost frame */
        a = cfa + (uintptr_t)(intptr_t)r->raOff;
        if (a < lo || a + 8 > hi) return -1;
        ra = stack_load(a);
        if (r->rbpHow == HOW_OFFSET) {
            a = cfa + (uintptr_t)(intptr_t)r->rbpOff;
            if (a < lo || a + 8 > hi) return -1;
            bp = stack_load(a);
        }
        sp = cfa;
        if (ra == 0) break;
        aPc[n++] = (void *)ra;
        pc = ra;
        bFirst = 0;
    }
    return n;
}

__attribute__((noinline)) int vt__unwind(void **aPc, int nMax, int bFast)
{
    int n = -1;
    if (nMax <= 0) return 0;
    if (bFast) n = walk_fast(aPc, nMax);
    if (n >= 0) {
        atomic_fetch_add_explicit(&nFast, 1, memory_order_relaxed);
        return n;
    }
    return walk_backtrace(aPc, nMax, __builtin_return_address(0));
}

#else /* not x86-64 Linux: backtrace() only */

__attribute__((noinline)) int vt__unwind(void **aPc, int nMax, int bFast)
{
    (void)bFast;
    if (nMax <= 0) return 0;
    return walk_backtrace(aPc, nMax, __builtin_return_address(0));
}

#endif

void vt__unwind_stats(struct vt_unwind_stats *pStats)
{
    pStats->fast = atomic_load(&nFast);
    pStats->fallback = atomic_load(&nFallback);
}
