/* Internal: the driver (and runtime) functions the CUPTI glue calls, found in the libraries the process already loaded. */
#ifndef VT_TRACER_DRIVER_H
#define VT_TRACER_DRIVER_H

/*
 * Nothing is linked and nothing is loaded: libcuda.so.1 (and a libcudart the
 * process has, for cudaFuncGetParamInfo) are looked up with dlsym at start,
 * once (dlsym inside a CUPTI callback could wait on the loader lock). Every
 * call is made with vt__t_inTracer raised, so the glue's API callback knows
 * the call is the tracer's own and records nothing of it. A function the
 * process lacks makes its query fail (-1), never crash.
 */
#include <cuda.h>
#include <stdint.h>

#include "hrec.h"
#include "kparams.h"

/* > 0 while the calling thread is inside the tracer's own driver call or call-site capture. */
extern _Thread_local int vt__t_inTracer;

/* Look the functions up (at start, before any callback). */
void vt__driver_load(void);

/* cuDriverGetVersion into *pVersion: 0, or -1. */
int vt__driver_version(int *pVersion);

/* The kernel-argument scanner's layout queries into *pKc (kparams.h): NULL where the process lacks one. */
void vt__driver_param_infos(struct vt__kparams_config *pKc);

/* Free and total memory of the current device (cuMemGetInfo): 0, or -1. */
int vt__driver_mem_info(uint64_t *pFree, uint64_t *pTotal);

/* The allocation containing ptr (cuMemGetAddressRange): 0, or -1. */
int vt__driver_address_range(uint64_t ptr, uint64_t *pBase, uint64_t *pSize);

/* Where an allocation handle's memory lives (its properties): memory kind and device (-1: host); 0, or -1. */
int vt__driver_handle_location(uint64_t handle, int *pMemKind, int *pDevice);

/* The device row of device dev (name, memory, compute capability, SMs, PCI, UUID, bandwidth) into *pRec. */
void vt__driver_device_row(int dev, struct vt_hrec *pRec);

#endif
