/* Tests for readable kernel names: demangling through the C++ runtime and Nsight-style short names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vramtrace/demangle.h"
#include "vt_test.h"

/* The short name of z, in a static buffer. */
static const char *short_of(const char *z)
{
    static char zOut[256];
    vt__short_name(z, zOut, sizeof zOut);
    return zOut;
}

TEST(demangle_cuda_kernels)
{
    char *z = NULL;
    int rc = vt__demangle("_Z5scaleIfEvPT_i", VT_DEMANGLE_LOAD, &z);
    if (!vt__demangle_available(VT_DEMANGLE_LOAD)) SKIP("no C++ runtime (libstdc++.so.6) installed");
    ASSERT_EQ(1, rc);
    ASSERT_STREQ("void scale<float>(float*, int)", z);
    free(z);
    ASSERT_EQ(VT_DEMANGLE_OK, vt__demangle("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_", VT_DEMANGLE_LOAD, &z));
    ASSERT_STREQ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
                 "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)", z);
    free(z);
    /* not mangled, or not valid: shown as stored */
    ASSERT_EQ(VT_DEMANGLE_NOT, vt__demangle("ampere_sgemm_128x64_nn", VT_DEMANGLE_LOAD, &z));
    ASSERT(z == NULL);
    ASSERT_EQ(VT_DEMANGLE_NOT, vt__demangle("_Z", VT_DEMANGLE_LOAD, &z));
    ASSERT(z == NULL);
    ASSERT_EQ(VT_DEMANGLE_NOT, vt__demangle("_Zx!garbage", VT_DEMANGLE_LOAD, &z));
    ASSERT(z == NULL);
    ASSERT_EQ(VT_DEMANGLE_NOT, vt__demangle(NULL, VT_DEMANGLE_LOAD, &z));
}

/* A hostile name: over the bound it is not handed to the demangler at all (NONE, nothing kept). */
TEST(demangle_bounds_the_name)
{
    size_t n = VT_DEMANGLE_MAX_NAME + 100, i;
    int rc;
    char *zLong = malloc(n + 1), *z = (char *)1;
    ASSERT(zLong != NULL);
    memcpy(zLong, "_ZN", 3);
    for (i = 3; i < n; i++) zLong[i] = "1a"[i & 1]; /* "1a1a...": a deep nest of one-letter names */
    zLong[n] = 0;
    ASSERT_EQ(VT_DEMANGLE_NONE, vt__demangle(zLong, VT_DEMANGLE_LOAD, &z));
    ASSERT(z == NULL);
    /* within the bound, the same shape is tried and answered without a crash */
    zLong[VT_DEMANGLE_MAX_NAME] = 0;
    rc = vt__demangle(zLong, VT_DEMANGLE_LOAD, &z);
    ASSERT(rc == VT_DEMANGLE_NONE || rc == VT_DEMANGLE_NOT || rc == VT_DEMANGLE_OK);
    free(z);
    free(zLong);
}

/* The tracer looks only in the process: where the process has no C++ runtime, nothing is loaded. */
TEST(demangle_in_process_only)
{
    char *z = NULL;
    int rc = vt__demangle("_Z1fv", VT_DEMANGLE_PROCESS, &z);
    if (vt__demangle_available(VT_DEMANGLE_PROCESS)) {
        ASSERT_EQ(VT_DEMANGLE_OK, rc);
        ASSERT_STREQ("f()", z);
    } else {
        ASSERT_EQ(VT_DEMANGLE_NONE, rc);
        ASSERT(z == NULL);
    }
    free(z);
    /* a name that is not mangled is answered without a demangler */
    ASSERT_EQ(VT_DEMANGLE_NOT, vt__demangle("ampere_sgemm_128x64_nn", VT_DEMANGLE_PROCESS, &z));
}

TEST(short_names)
{
    char zSmall[5];
    ASSERT_STREQ("scale", short_of("void scale<float>(float*, int)"));
    ASSERT_STREQ("vectorized_elementwise_kernel",
                 short_of("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
                          "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)"));
    ASSERT_STREQ("fill", short_of("void at::native::(anonymous namespace)::fill<float>(float*, int)"));
    ASSERT_STREQ("reduce", short_of("(anonymous namespace)::reduce(int)"));
    /* template arguments holding parentheses and scopes (lambdas) */
    ASSERT_STREQ("elementwise_kernel",
                 short_of("void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<X>"
                          "(at::TensorIteratorBase&, X const&)::{lambda(int)#1}>(int, X)"));
    ASSERT_STREQ("gemm", short_of("cutlass::Kernel<T>::gemm(Params)"));
    /* already short, extern "C", or not a function */
    ASSERT_STREQ("ampere_sgemm_128x64_nn", short_of("ampere_sgemm_128x64_nn"));
    ASSERT_STREQ("kernel", short_of("kernel<float>"));
    ASSERT_STREQ("", short_of(""));
    /* cut to the buffer, full length returned */
    ASSERT_EQ(29, (int)vt__short_name("void vectorized_elementwise_kernel<4>(int)", zSmall, sizeof zSmall));
    ASSERT_STREQ("vect", zSmall);
}

VT_TEST_LIST(T(demangle_cuda_kernels) T(demangle_bounds_the_name) T(demangle_in_process_only) T(short_names))
