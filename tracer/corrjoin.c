/* The correlation join's API calls: parked until their activity record comes, then folded into its row or written alone. */
#include "decode.h"

/* The api_call row of call cv. */
static void call_row(const struct vt__corr_val *cv, struct vt__row *r)
{
    r->table = VT_T_API_CALL;
    r->nullMask = cv->callNull;
    for (int i = 0; i < VT_AC_N; i++) r->v[i].i = cv->aCall[i];
}

void vt__join_alone(struct vt__decoder *d, const struct vt__corr_val *cv)
{
    struct vt__row r;
    if (!cv->bParked) return;
    call_row(cv, &r);
    d->xEmit(d->pCtx, &r);
}

void vt__join_emit(struct vt__decoder *d, struct vt__row *pAct, int joined, const struct vt__corr_val *cv)
{
    struct vt__row r;
    if (joined && cv->bParked && d->xEmitFold) {
        call_row(cv, &r);
        if (vt__fold_match(pAct, &r)) {
            d->xEmitFold(d->pCtx, pAct, &r);
            return;
        }
    }
    if (joined) vt__join_alone(d, cv);
    d->xEmit(d->pCtx, pAct);
}

/* Drain visitor: write a call still waiting for its activity record, alone. */
static void finish_call(void *pCtx, uint32_t key, void *pVal)
{
    (void)key;
    vt__join_alone((struct vt__decoder *)pCtx, (const struct vt__corr_val *)pVal);
}

/* Walk visitor of vt__decoder_age: a parked call older than the age written alone; 0 at the first younger one. */
static int age_one(void *pCtx, uint32_t key, void *pVal)
{
    struct vt__decoder *d = pCtx;
    struct vt__corr_val *cv = pVal;
    (void)key;
    if ((uint32_t)d->nowMs - cv->parkMs < d->ageMs) return 0; /* unsigned difference: the clock's low bits may wrap */
    vt__join_alone(d, cv);
    cv->bParked = 0;
    return 1;
}

void vt__decoder_age(struct vt__decoder *d, uint64_t nowMs, uint64_t maxAgeMs)
{
    d->nowMs = nowMs;
    d->ageMs = maxAgeMs;
    vt__boundmap_walk(&d->corr, &d->agedSeq, age_one, d);
}

void vt__join_finish(struct vt__decoder *d)
{
    vt__boundmap_drain(&d->corr, finish_call, d);
}
