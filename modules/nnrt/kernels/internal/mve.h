/*
 * Internal to the nnrt kernels: whether the Helium (M-profile Vector Extension, MVE)
 * paths are compiled. Not a public header.
 *
 * NNRT_MVE is 1 when the compiler targets a core with integer MVE
 * (__ARM_FEATURE_MVE bit 0: Cortex-M55, Cortex-M85 with -mfloat-abi=hard or softfp)
 * and NNRT_PORTABLE_ONLY is not defined. The Helium kernels (internal/mve_*.h) then
 * replace the DSP depth loops: 16 int8 multiply-adds per VMLADAVA, tails by VCTP
 * predication. Selected by the ACLE macro only, never by a list of cores. Every other
 * core compiles none of it.
 */
#ifndef NNRT_KERNELS_INTERNAL_MVE_H_
#define NNRT_KERNELS_INTERNAL_MVE_H_

#if defined(__ARM_FEATURE_MVE) && ((__ARM_FEATURE_MVE & 1) != 0) && !defined(NNRT_PORTABLE_ONLY)
#define NNRT_MVE 1
#include <arm_mve.h>
#else
#define NNRT_MVE 0
#endif

#endif /* NNRT_KERNELS_INTERNAL_MVE_H_ */
