/* Tests for kernel roles by name: the real kernel names of tests/accuracy/kernels.tsv, and token matching. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "vt_test.h"

#define MAXNAME 256

/* Counts of kernel launches of kernels.tsv by true role (F B O Z C) and predicted role. */
struct tally {
    long n[5][4];
    char azStep[8][32];  /* the steps, and per step the backward launches and those recognized */
    long aBwd[8], aBwdSaid[8];
    int nStep;
};

static int role_index(char c)
{
    const char *z = strchr("FBOZC", c);
    return z && c ? (int)(z - "FBOZC") : -1;
}

/* Classify every launch of kernels.tsv (N id name / S step role ... name_id rows). */
static void classify_file(const char *zPath, struct tally *pT)
{
    static char *azName[MAXNAME];
    char zLine[8192];
    FILE *f = fopen(zPath, "r");
    ASSERT(f != NULL);
    memset(pT, 0, sizeof *pT);
    while (fgets(zLine, sizeof zLine, f)) {
        char *az[8];
        int n = 0;
        zLine[strcspn(zLine, "\n")] = 0;
        if (zLine[0] == '#') continue;
        for (char *p = zLine; n < 8; n++) {
            az[n] = p;
            p = strchr(p, '\t');
            if (!p) { n++; break; }
            *p++ = 0;
        }
        if (!strcmp(az[0], "N") && n == 3) {
            int id = atoi(az[1]);
            ASSERT(id > 0 && id < MAXNAME);
            azName[id] = strdup(az[2]);
            ASSERT(azName[id] != NULL);
        } else if (!strcmp(az[0], "S") && n == 7) {
            int id = atoi(az[6]), r = role_index(az[2][0]);
            ASSERT(id > 0 && id < MAXNAME && azName[id] && r >= 0);
            int k = vt__kernel_role(azName[id]), iStep = 0;
            while (iStep < pT->nStep && strcmp(pT->azStep[iStep], az[1])) iStep++;
            if (iStep == pT->nStep) {
                ASSERT(pT->nStep < 8);
                snprintf(pT->azStep[pT->nStep++], sizeof pT->azStep[0], "%s", az[1]);
            }
            pT->n[r][k]++;
            pT->aBwd[iStep] += r == 1;
            pT->aBwdSaid[iStep] += r == 1 && k == VT_KROLE_BWD;
        }
    }
    fclose(f);
    for (int i = 0; i < MAXNAME; i++) free(azName[i]), azName[i] = NULL;
}

/* Real names: no launch is called an optimizer kernel (none of these steps has a fused or
 * foreach optimizer: SGD runs as plain elementwise kernels); what is called backward is
 * backward; every NCCL launch is a collective; enough backward launches are recognized for
 * the step structure to show (measured: 215 of 2345 backward launches
 * recognized, none wrongly; no optimizer launch; all 404 NCCL launches). */
TEST(real_names)
{
    struct tally t;
    const char *zPath = VT_KERNELS_TSV;
    long nAll = 0, nBwdTrue = 0, nBwdSaid = 0, nBwdRight = 0, nFwdAsBwd = 0;
    classify_file(zPath, &t);
    for (int r = 0; r < 5; r++)
        for (int k = 0; k < 4; k++) nAll += t.n[r][k];
    for (int r = 0; r < 5; r++) nBwdSaid += t.n[r][VT_KROLE_BWD];
    for (int k = 0; k < 4; k++) nBwdTrue += t.n[1][k];
    nBwdRight = t.n[1][VT_KROLE_BWD];
    nFwdAsBwd = t.n[0][VT_KROLE_BWD];
    printf("launches %ld; backward: %ld true, %ld said, %ld right; forward said backward %ld; "
           "optimizer said %ld; collectives %ld of %ld\n",
           nAll, nBwdTrue, nBwdSaid, nBwdRight, nFwdAsBwd,
           t.n[0][VT_KROLE_OPT] + t.n[1][VT_KROLE_OPT] + t.n[2][VT_KROLE_OPT] + t.n[3][VT_KROLE_OPT] +
               t.n[4][VT_KROLE_OPT],
           t.n[4][VT_KROLE_COLL], t.n[4][0] + t.n[4][1] + t.n[4][2] + t.n[4][3]);
    fflush(stdout);
    ASSERT(nAll > 5000);
    for (int r = 0; r < 5; r++) ASSERT(t.n[r][VT_KROLE_OPT] == 0);
    /* backward precision: the launches called backward that are not are shared kernels (cuDNN
     * offset computations run in both passes) */
    ASSERT(nBwdRight * 100 >= nBwdSaid * 90);
    ASSERT(nFwdAsBwd * 100 <= (t.n[0][0] + t.n[0][1] + t.n[0][2] + t.n[0][3]) * 2);
    /* recall is low by nature (GEMMs and elementwise kernels serve both passes), but every
     * step's backward pass shows (this is what the step structure is found from) */
    ASSERT(nBwdRight * 100 >= nBwdTrue * 8);
    ASSERT(t.nStep == 4);
    for (int i = 0; i < t.nStep; i++) ASSERT(t.aBwd[i] == 0 || t.aBwdSaid[i] > 0);
    ASSERT(t.n[4][VT_KROLE_COLL] == t.n[4][0] + t.n[4][1] + t.n[4][2] + t.n[4][3]);
    ASSERT(t.n[4][VT_KROLE_COLL] > 0);
}

/* Whole tokens: lambdas and words that contain an optimizer's name are not optimizers. */
TEST(tokens)
{
    ASSERT(vt__kernel_role("void at::native::vectorized_elementwise_kernel<4, at::native::clamp_min_scalar_kernel_impl("
                           "at::TensorIterator&, c10::Scalar)::{lambda()#1}::operator()() const::{lambda(float)#1}>") ==
           VT_KROLE_OTHER);
    ASSERT(vt__kernel_role("_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_UlfE_") == VT_KROLE_OTHER);
    ASSERT(vt__kernel_role("volta_sgemm_128x64_nt") == VT_KROLE_OTHER);
    ASSERT(vt__kernel_role("lambda_kernel") == VT_KROLE_OTHER);
    ASSERT(vt__kernel_role("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::("
                           "anonymous namespace)::FusedOptimizerTensorListMetadata<4>, "
                           "at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4>>") == VT_KROLE_OPT);
    ASSERT(vt__kernel_role("void multi_tensor_apply_kernel<TensorListMetadata<3>, BinaryOpListAlphaFunctor<float>>") ==
           VT_KROLE_OPT);
    ASSERT(vt__kernel_role("void multi_tensor_apply_kernel<TensorListMetadata<5>, LAMBStage1Functor<float>>") ==
           VT_KROLE_OPT);
    ASSERT(vt__kernel_role("void SGDFunctor<float>(int)") == VT_KROLE_OPT);
    ASSERT(vt__kernel_role("void cudnn::winograd_nonfused::winogradWgradData4x4<float, float>()") == VT_KROLE_BWD);
    ASSERT(vt__kernel_role("void cudnn::bn_bw_1C11_kernel_new<float>()") == VT_KROLE_BWD);
    ASSERT(vt__kernel_role("void cudnn::bn_fw_tr_1C11_kernel_NCHW<float>()") == VT_KROLE_OTHER);
    ASSERT(vt__kernel_role("cunn_ClassNLLCriterion_updateGradInput_kernel<float>") == VT_KROLE_BWD);
    ASSERT(vt__kernel_role("_ZN2at6native39_GLOBAL__N__df250f02_7_Loss_cu_5b0651e139nll_loss_backward_reduce_cuda_"
                           "kernel_2dIflEEvPT_") == VT_KROLE_BWD);
    ASSERT(vt__kernel_role("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096>)") == VT_KROLE_COLL);
    ASSERT(vt__kernel_role("") == VT_KROLE_OTHER);
    ASSERT(vt__kernel_role(NULL) == VT_KROLE_OTHER);
}

VT_TEST_LIST(T(tokens) T(real_names))
