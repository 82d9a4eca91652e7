/**
 * @file spec.h
 * @brief For generated code only: the kernel bodies that code generation specialises
 *        to one operator (not a stable API).
 *
 * `nnopt` (``--specialize``) emits, for the ops where it pays, a small function in the
 * generated model source that calls the same inline body the generic kernel in
 * libnnrt runs, but with the op's parameters as `static const` objects: GCC folds the
 * geometry, padding, offsets, per-channel flag and activation range into constants
 * (loop bounds, immediates, no dead branches). One source of truth, so the results are
 * the generic kernel's, byte for byte. The functions are named `<model>_spec_op<k>*`;
 * `nnopt run --stats` reports the sum of their sizes as `specialized_rom_bytes`.
 *
 * Specialised so far: the matrix-core convolution (nnrt_conv2d_im2col_s8(),
 * nnrt_conv2d_1x1_s8(), nnrt_conv2d_opt_s8(): nnrt_spec_conv_gemm_s8() below) and the
 * int8 fully connected (nnrt_fully_connected_s8(): generated code calls its body
 * nnrt_fc_body() of internal/fc_body.h directly, or nnrt_fc_pairs_body() of
 * internal/fc_pairs.h when it wrote the weights in that file's row-pair layout).
 *
 * Private, like the bodies it includes: it lives under the private include directory
 * modules/nnrt/kernels (as kernels/nnrt/kernels/spec.h), which only the runtime and the
 * generated model sources have on their include path, so generated code keeps its
 * spelling `nnrt/kernels/spec.h` while the public include/ holds public headers only
 * (tests/test_import_graph.py checks that no public header includes a private one).
 */
#ifndef NNRT_KERNELS_SPEC_H_
#define NNRT_KERNELS_SPEC_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/conv.h"
#include "nnrt/kernels/fc.h"

/* The bodies live with the kernels: private headers in modules/nnrt/kernels/internal/,
 * on the include path of every build of generated code (the private include directory
 * modules/nnrt/kernels: nnopt.paths.nnrt_include_dirs(), and on Zephyr the property
 * NNRT_GENERATED_INCLUDE_DIRECTORIES of modules/nnrt/CMakeLists.txt). */
#include "internal/conv_gemm_body.h"
#include "internal/conv_pixel.h"
#include "internal/fc_body.h"
#include "internal/fc_int16.h"
#include "internal/fc_pack23.h"
#include "internal/fc_pairs.h"
#include "internal/gemm_body.h"
#include "internal/simd.h"

/** Keeps a specialised function out of line (its own symbol, its own registers). */
#define NNRT_SPEC_NOINLINE NNRT_NOINLINE

/**
 * The matrix-core convolution of one op: `params` and `core` are the op's
 * `static const` parameters (core = its nnrt_gemm_s8_t: depth, channels, weights,
 * requantisation, output stage), px2 its instance of nnrt_gemm_2px_body(). With
 * scratch (nnrt_conv_gemm_bytes() bytes) nnrt_conv2d_im2col_s8() /
 * nnrt_conv2d_1x1_s8(); scratch == NULL: nnrt_conv2d_opt_s8() (columns in the output,
 * the last pixels' on the stack where they fit, else one pixel at a time). Arguments were checked at build time.
 */
static NNRT_ALWAYS_INLINE nnrt_status_t nnrt_spec_conv_gemm_s8(
    const nnrt_conv_s8_params_t *params, const nnrt_gemm_s8_t *core, const int8_t *input,
    int8_t *output, void *scratch, nnrt_gemm_2px_fn px2)
{
    const int one = nnrt_conv_pointwise(&params->geom);
    const size_t need = nnrt_conv_gemm_bytes_body(&params->geom, one);
    size_t done = nnrt_conv_gemm_body(params, core, input, output, scratch, px2, 1, need,
                                      one, 0);
    if (scratch == NULL) {
        if (nnrt_conv_gemm_tail_fits(&params->geom, need, done)) {
            uint32_t cols[NNRT_CONV_TAIL_STACK_BYTES / 4]; /* 4-byte aligned */
            done = nnrt_conv_gemm_body(params, core, input, output, cols, px2, 1, need, one,
                                       done);
        }
        nnrt_conv_pixels_from(params, input, core->filter, core->bias, core->rq, output, done);
    }
    return NNRT_OK;
}

#endif /* NNRT_KERNELS_SPEC_H_ */
