/* Internal: native stack unwinding for site capture — cached DWARF CFI rules on x86-64, backtrace() elsewhere. */
#ifndef VT_TRACER_UNWIND_H
#define VT_TRACER_UNWIND_H

/*
 * vt__unwind answers exactly what glibc's backtrace() answers (return
 * addresses, innermost first, aPc[0] in the caller of vt__unwind), several
 * times faster once warm: on x86-64 the unwinding rule of each address (where
 * the canonical frame address, the return address and the saved frame pointer
 * are) is derived once from the module's .eh_frame (located with libgcc's
 * _Unwind_Find_FDE) and kept in a per-thread cache, so a frame costs a cache
 * probe and two loads instead of a DWARF interpretation.
 *
 * Safety: the walk starts only when the stack pointer lies in the calling
 * thread's stack region (pthread_getattr_np); every load is between that
 * stack pointer and the top of the region, all of which is mapped, and frame
 * addresses must strictly increase. Whenever a rule is outside the
 * supported subset (DWARF expressions, a frame address kept in a register other
 * than rsp/rbp, signal frames) or a bound would be crossed, the whole walk is
 * redone with backtrace(): the answer never depends on which path ran. Other
 * architectures always use backtrace().
 *
 * Thread-safe; uses about 16 KiB of thread-local cache per thread that
 * captures.
 */

struct vt_unwind_stats {
    unsigned long long fast;     /* walks completed by the cached unwinder */
    unsigned long long fallback; /* walks redone with backtrace() */
};

/*
 * Write at most nMax return addresses of the calling thread's stack to aPc,
 * innermost first, as backtrace(aPc, nMax) would. Returns the number written.
 * bFast 0 forces backtrace().
 */
int vt__unwind(void **aPc, int nMax, int bFast);

/* Counters of this process (all threads). */
void vt__unwind_stats(struct vt_unwind_stats *pStats);

#endif
