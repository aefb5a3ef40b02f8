/* PyTorch program pieces for the accuracy suite: models, forward/backward, optimizers, loaders, DDP. */
#include "pt.h"

#include <stdio.h>
#include <string.h>

#define CALL PT_CALL

/* Library frames from each kind of operator up to the module call (PyTorch 2.x, Python 3.12 qualified names). */
static const char *const azLib[PT_KIND_N] = {
    [PT_CONV] = "lib:torch/nn/modules/conv.py:548:Conv2d._conv_forward|lib:torch/nn/modules/conv.py:553:Conv2d.forward|" CALL,
    [PT_BN] = "lib:torch/nn/functional.py:2822:batch_norm|lib:torch/nn/modules/batchnorm.py:193:_BatchNorm.forward|" CALL,
    [PT_POOL] = "lib:torch/nn/functional.py:830:_max_pool2d|lib:torch/_jit_internal.py:622:boolean_dispatch.<locals>.fn|"
                "lib:torch/nn/modules/pooling.py:213:MaxPool2d.forward|" CALL,
    [PT_ADD] = "lib:torchvision/models/resnet.py:155:Bottleneck.forward|" CALL,
    [PT_LINEAR] = "lib:torch/nn/modules/linear.py:134:Linear.forward|" CALL,
    [PT_EMBED] = "lib:torch/nn/functional.py:2551:embedding|lib:torch/nn/modules/sparse.py:192:Embedding.forward|" CALL,
    [PT_ATTN] = "lib:torch/nn/functional.py:6345:multi_head_attention_forward|"
                "lib:torch/nn/modules/activation.py:1380:MultiheadAttention.forward|" CALL,
    [PT_MLP] = "lib:torch/nn/modules/linear.py:134:Linear.forward|" CALL,
    [PT_NORM] = "lib:torch/nn/functional.py:2910:layer_norm|lib:torch/nn/modules/normalization.py:229:LayerNorm.forward|" CALL,
    [PT_HEAD] = "lib:torch/nn/modules/linear.py:134:Linear.forward|" CALL,
};

/* torchvision's ResNet between its layers and the call of the model */
#define RESNET "lib:torch/nn/modules/container.py:250:Sequential.forward|" CALL \
    "|lib:torchvision/models/resnet.py:276:ResNet._forward_impl|lib:torchvision/models/resnet.py:285:ResNet.forward|" CALL

const char *pt_frames(const char *zA, const char *zB)
{
    static char az[4][4096];
    static int i;
    char zBuf[4096]; /* composed apart: zA or zB may be an earlier result */
    i = (i + 1) % 4;
    if (!zA || !*zA) snprintf(zBuf, sizeof zBuf, "%s", zB ? zB : "");
    else if (!zB || !*zB) snprintf(zBuf, sizeof zBuf, "%s", zA);
    else snprintf(zBuf, sizeof zBuf, "%s|%s", zA, zB);
    memcpy(az[i], zBuf, sizeof zBuf);
    return az[i];
}

/* Append a layer (ignored past PT_MAXL). */
static void layer(struct pt_model *m, int kind, int64_t act, int64_t w, int64_t ws)
{
    if (m->n >= PT_MAXL) return;
    m->a[m->n].kind = kind;
    m->a[m->n].act = act;
    m->a[m->n].w = w;
    m->a[m->n].ws = ws;
    m->n++;
}

/* Reset the model's tensor handles. */
static void handles(struct pt_model *m)
{
    for (int i = 0; i < PT_MAXL; i++) m->w[i] = m->g[i] = m->st[0][i] = m->st[1][i] = -1;
    m->cublas = -1;
    m->bStateMade = 0;
}

void pt_cnn(struct pt_model *m, int64_t image, int nClass)
{
    /* ResNet-50: stem, then bottleneck stages (spatial size, mid channels, out channels, blocks) */
    static const int aStage[4][4] = {{56, 64, 256, 3}, {28, 128, 512, 4}, {14, 256, 1024, 6}, {7, 512, 2048, 3}};
    int64_t r = image / 4, cin = 64;
    memset(m, 0, sizeof *m);
    handles(m);
    layer(m, PT_CONV, (image / 2) * (image / 2) * 64 * 4, 3 * 64 * 49 * 4, 8 * MiB);
    layer(m, PT_BN, (image / 2) * (image / 2) * 64 * 4, 2 * 64 * 4, 0);
    layer(m, PT_POOL, r * r * 64 * 4, 0, 0);
    for (int s = 0; s < 4; s++) {
        int64_t hw = (int64_t)aStage[s][0] * aStage[s][0] * image / 224 * image / 224, mid = aStage[s][1], out = aStage[s][2];
        for (int b = 0; b < aStage[s][3]; b++) {
            layer(m, PT_CONV, hw * mid * 4, cin * mid * 4, 0);
            layer(m, PT_BN, hw * mid * 4, 2 * mid * 4, 0);
            layer(m, PT_CONV, hw * mid * 4, mid * mid * 9 * 4, 16 * MiB);
            layer(m, PT_BN, hw * mid * 4, 2 * mid * 4, 0);
            layer(m, PT_CONV, hw * out * 4, mid * out * 4, 0);
            layer(m, PT_BN, hw * out * 4, 2 * out * 4, 0);
            if (b == 0) {
                layer(m, PT_CONV, hw * out * 4, cin * out * 4, 0); /* downsample */
                layer(m, PT_BN, hw * out * 4, 2 * out * 4, 0);
            }
            layer(m, PT_ADD, hw * out * 4, 0, 0);
            cin = out;
        }
    }
    layer(m, PT_POOL, 2048 * 4, 0, 0);
    layer(m, PT_HEAD, (int64_t)nClass * 4, 2048 * (int64_t)nClass * 4, 0);
    m->nState = 1; /* SGD with momentum */
    m->stateMul = 2;
    m->cublasBytes = 32 * MiB; /* CUBLAS_WORKSPACE_CONFIG :4096:8 on Hopper */
}

void pt_lm(struct pt_model *m, int nLayer, int64_t d, int64_t seq, int64_t vocab, int bUserModel)
{
    /* bf16 decoder-only transformer: per sample (one sequence) activation bytes */
    memset(m, 0, sizeof *m);
    handles(m);
    layer(m, PT_EMBED, seq * d * 2, vocab * d * 2, 0);
    for (int l = 0; l < nLayer && m->n + 8 < PT_MAXL; l++) {
        layer(m, PT_NORM, seq * d * 2, 2 * d * 2, 0);
        layer(m, PT_LINEAR, seq * 3 * d * 2, 3 * d * d * 2, 0); /* qkv */
        layer(m, PT_ATTN, seq * d * 2, 0, 0);
        layer(m, PT_LINEAR, seq * d * 2, d * d * 2, 0);          /* proj */
        layer(m, PT_NORM, seq * d * 2, 2 * d * 2, 0);
        layer(m, PT_MLP, seq * 4 * d * 2, 4 * d * d * 2, 0);
        layer(m, PT_MLP, seq * d * 2, 4 * d * d * 2, 0);
    }
    layer(m, PT_NORM, seq * d * 2, 2 * d * 2, 0);
    layer(m, PT_HEAD, seq * vocab * 2, 0, 0); /* tied to the embedding */
    if (bUserModel) {
        /* a model written in the user's model.py: its lines sit between the ops and the call */
        static const char *const azUser[PT_KIND_N] = {
            [PT_EMBED] = "model.py:142:GPT.forward",
            [PT_NORM] = "model.py:118:Block.forward|" CALL "|model.py:146:GPT.forward",
            [PT_LINEAR] = "model.py:61:CausalSelfAttention.forward|" CALL "|model.py:119:Block.forward|" CALL "|model.py:146:GPT.forward",
            [PT_ATTN] = "model.py:67:CausalSelfAttention.forward|" CALL "|model.py:119:Block.forward|" CALL "|model.py:146:GPT.forward",
            [PT_MLP] = "model.py:94:MLP.forward|" CALL "|model.py:121:Block.forward|" CALL "|model.py:146:GPT.forward",
            [PT_HEAD] = "model.py:149:GPT.forward",
        };
        static char azBuf[PT_KIND_N][1024];
        for (int k = 0; k < PT_KIND_N; k++) {
            if (!azUser[k]) continue;
            snprintf(azBuf[k], sizeof azBuf[k], "%s|%s|" CALL, azLib[k], azUser[k]);
            m->azFrames[k] = azBuf[k];
        }
    }
    m->nState = 2; /* Adam */
    m->stateMul = 4; /* fp32 moments of bf16 parameters */
    m->cublasBytes = 32 * MiB;
}

void pt_shrink(struct pt_model *m, int k)
{
    int n = 0, last = m->n - 1;
    int64_t maxAct = 0;
    if (k <= 1 || m->n < 2) return;
    for (int i = 0; i < last; i++)
        if (m->a[i].act > maxAct) maxAct = m->a[i].act;
    /* the head (the model's output) stays a layer of its own; a group never holds more activation
     * bytes than the model's largest layer, so the allocator still sees blocks of realistic sizes */
    for (int i = 0; i < last;) {
        struct pt_layer l = m->a[i++];
        for (int d = 1; d < k && i < last && l.act + m->a[i].act <= maxAct; d++, i++) {
            l.act += m->a[i].act;
            l.w += m->a[i].w;
            if (m->a[i].ws > l.ws) l.ws = m->a[i].ws;
        }
        m->a[n++] = l;
    }
    m->a[n++] = m->a[last];
    m->n = n;
}

int64_t pt_param_bytes(const struct pt_model *m)
{
    int64_t n = 0;
    for (int i = 0; i < m->n; i++) n += m->a[i].w;
    return n;
}

int64_t pt_act_bytes(const struct pt_model *m)
{
    int64_t n = 0;
    for (int i = 0; i < m->n; i++) n += m->a[i].act;
    return n;
}

/* The site of layer i's forward ops called from zUser. */
static int fwd_site(struct js *j, const struct pt_model *m, int i, const char *zUser)
{
    int k = m->a[i].kind;
    if (m->azFrames[k]) return js_site(j, pt_frames(m->azFrames[k], zUser));
    return js_site(j, pt_frames(pt_frames(azLib[k], RESNET), zUser));
}

void pt_to_device(struct js *j, struct pt_model *m, const char *zUser)
{
    int site = js_site(j, pt_frames("lib:torch/nn/modules/module.py:1355:Module.to.<locals>.convert|"
                                    "lib:torch/nn/modules/module.py:942:Module._apply|"
                                    "lib:torch/nn/modules/module.py:915:Module._apply|"
                                    "lib:torch/nn/modules/module.py:1369:Module.to", zUser));
    js_here(j, site);
    for (int i = 0; i < m->n; i++) {
        if (!m->a[i].w) continue;
        m->w[i] = js_alloc(j, m->a[i].w, site, JS_NAT_ALLOC);
        js_h2d(j, m->w[i], m->a[i].w, JS_PAGEABLE, 0, site);
    }
}

int pt_batch(struct js *j, int pin, int64_t xBytes, const char *zUser)
{
    int site = js_site(j, zUser), x = js_alloc(j, xBytes, site, JS_NAT_ALLOC);
    if (x >= 0) js_h2d(j, x, xBytes, pin >= 0 ? JS_PINNED : JS_PAGEABLE, pin >= 0 ? js_pin_addr(j, pin) : 0, site);
    return x;
}

struct pt_fwd pt_forward(struct js *j, struct pt_model *m, int x, int batch, int bGrad, int keepX, const char *zUser)
{
    struct pt_fwd f;
    int cur = x;
    memset(&f, 0, sizeof f);
    for (int i = 0; i < PT_MAXL; i++) f.saved[i] = -1;
    f.out = f.loss = -1;
    f.failSite = -1;
    js_here(j, js_site(j, zUser));
    for (int i = 0; i < m->n; i++) {
        const struct pt_layer *l = &m->a[i];
        int site = fwd_site(j, m, i, zUser), ws = -1, out;
        int kind = l->kind;
        if (m->cublasBytes && m->cublas < 0 && (kind == PT_LINEAR || kind == PT_MLP || kind == PT_HEAD))
            m->cublas = js_alloc(j, m->cublasBytes, site, JS_NAT_CUBLAS);
        if (l->ws) ws = js_alloc(j, l->ws, site, JS_NAT_ALLOC);
        out = js_alloc(j, l->act * batch, site, JS_NAT_ALLOC);
        if (out < 0) { /* out of memory: the exception unwinds the forward */
            f.failSite = site;
            f.out = -1;
            if (m->bOomKeep) return f; /* the process dies with everything live */
            if (ws >= 0) js_free(j, ws);
            if (cur != x || !keepX) js_free(j, cur);
            for (int k = 0; k < i; k++)
                if (f.saved[k] >= 0 && f.saved[k] != x) js_free(j, f.saved[k]);
            f.out = -1;
            return f;
        }
        {
            int aT[5] = {cur, m->w[i], out, ws, kind == PT_LINEAR || kind == PT_MLP || kind == PT_HEAD ? m->cublas : -1};
            js_play(j, 'F', i, m->n + 1, aT, 5);
        }
        if (ws >= 0) js_free(j, ws);
        if (bGrad) f.saved[i] = cur;
        else if (cur != x || !keepX) js_free(j, cur);
        cur = out;
    }
    f.out = cur;
    {
        int site = js_site(j, pt_frames("lib:torch/nn/functional.py:3494:cross_entropy|"
                                        "lib:torch/nn/modules/loss.py:1310:CrossEntropyLoss.forward|" CALL, zUser));
        int aT[2];
        f.loss = js_alloc(j, 4, site, JS_NAT_ALLOC);
        aT[0] = f.out;
        aT[1] = f.loss;
        js_play(j, 'F', m->n, m->n + 1, aT, 2);
    }
    return f;
}

/*
 * loss.backward() ran out of memory at site, the layers from i down still to do: the exception
 * leaves backward(), the gradients in flight (gOut, gIn) are freed as it unwinds, and the caller
 * catching it drops the graph with the step's other tensors (their saved activations freed here;
 * the first is the batch, the caller's). With bOomKeep the process dies with everything live.
 * Returns site.
 */
static int backward_unwind(struct js *j, struct pt_model *m, struct pt_fwd *f, int i, int gOut, int gIn, int site)
{
    if (m->bOomKeep) return site;
    js_free(j, gOut);
    js_free(j, gIn);
    for (int k = 1; k <= i && k < m->n; k++) {
        js_free(j, f->saved[k]);
        f->saved[k] = -1;
    }
    return site;
}

int pt_backward(struct js *j, struct pt_model *m, struct pt_fwd *f, int batch, const int *aBucket, int nBucket)
{
    int gOut, bucket = nBucket - 1;
    int64_t bucketFill = 0, bucketCap = 25 * MiB;
    int site = js_site(j, ""); /* the autograd engine's thread runs no Python */
    gOut = js_alloc(j, m->a[m->n - 1].act * batch, site, JS_NAT_BACKWARD);
    if (gOut < 0) return backward_unwind(j, m, f, m->n - 1, -1, -1, site);
    {
        int aT[3] = {f->loss, f->out, gOut};
        js_play(j, 'B', 0, m->n + 1, aT, 3);
    }
    for (int i = m->n - 1; i >= 0; i--) {
        int gIn = i > 0 ? js_alloc(j, m->a[i - 1].act * batch, site, JS_NAT_BACKWARD) : -1;
        if (i > 0 && gIn < 0) return backward_unwind(j, m, f, i, gOut, -1, site);
        if (m->a[i].w && m->g[i] < 0 && (m->g[i] = js_alloc(j, m->a[i].w, site, JS_NAT_ACCGRAD)) < 0) /* AccumulateGrad */
            return backward_unwind(j, m, f, i, gOut, gIn, site);
        {
            int aT[6] = {gOut, f->saved[i], m->w[i], m->g[i], gIn, m->cublas};
            js_play(j, 'B', m->n - i, m->n + 1, aT, 6);
        }
        if (i > 0) {
            js_free(j, f->saved[i]);
            f->saved[i] = -1;
        }
        js_free(j, gOut);
        gOut = gIn;
        /* DDP: a bucket is all-reduced as soon as its gradients are ready */
        bucketFill += m->a[i].w;
        /* (at the end every bucket has been reduced, as DDP reduces all of them each backward: layers
         * larger than a bucket leave the count DDP sized them by to the last ones) */
        while (nBucket > 0 && bucket >= 0 && (bucketFill >= bucketCap || i == 0)) {
            int aT[2] = {aBucket[bucket], m->g[i]};
            js_play(j, 'C', nBucket - 1 - bucket, nBucket, aT, 2);
            bucket--;
            bucketFill = 0;
            if (i > 0) break;
        }
    }
    return -1;
}

int pt_step(struct js *j, struct pt_model *m, const char *zUser)
{
    int site = js_site(j, pt_frames(m->nState == 2 ? "lib:torch/optim/adam.py:165:Adam._init_group|"
                                                     "lib:torch/optim/adam.py:247:Adam.step"
                                                   : "lib:torch/optim/sgd.py:391:_single_tensor_sgd|"
                                                     "lib:torch/optim/sgd.py:346:sgd|lib:torch/optim/sgd.py:129:SGD.step",
                                    pt_frames("lib:torch/optim/optimizer.py:79:_use_grad_for_differentiable.<locals>._use_grad|"
                                              "lib:torch/optim/optimizer.py:516:Optimizer.profile_hook_step.<locals>.wrapper",
                                              zUser)));
    js_here(j, js_site(j, zUser));
    if (!m->bStateMade) { /* state is created lazily, at the first step */
        for (int i = 0; i < m->n; i++)
            for (int k = 0; k < m->nState; k++)
                if (m->a[i].w && (m->st[k][i] = js_alloc(j, m->a[i].w * m->stateMul / 2, site, JS_NAT_ALLOC)) < 0)
                    return site; /* out of memory: the exception leaves the step */
        m->bStateMade = 1;
    }
    {
        int nP = 0, k = 0;
        for (int i = 0; i < m->n; i++) nP += m->a[i].w > 0;
        for (int i = 0; i < m->n; i++) {
            if (!m->a[i].w) continue;
            int aT[4] = {m->w[i], m->g[i], m->st[0][i], m->st[1][i]};
            js_play(j, 'O', k++, nP, aT, 4);
        }
    }
    return -1;
}

void pt_zero_grad(struct js *j, struct pt_model *m, int bToNone, const char *zUser)
{
    int nP = 0, k = 0;
    js_here(j, js_site(j, pt_frames("lib:torch/optim/optimizer.py:1003:Optimizer.zero_grad", zUser)));
    for (int i = 0; i < m->n; i++) nP += m->g[i] >= 0;
    for (int i = 0; i < m->n; i++) {
        if (m->g[i] < 0) continue;
        if (bToNone) {
            js_free(j, m->g[i]);
            m->g[i] = -1;
        } else {
            int aT[1] = {m->g[i]};
            js_play(j, 'Z', k++, nP, aT, 1);
        }
    }
}

void pt_item(struct js *j, int t, const char *zUser)
{
    js_d2h(j, t, 4, js_site(j, zUser));
}
