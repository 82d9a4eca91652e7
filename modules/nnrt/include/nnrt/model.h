/**
 * @file model.h
 * @brief The API of a model compiled by nnopt (`<name>_model.c/.h`).
 *
 * Generated code defines `const nnrt_model_t <name>_model;`. An application calls
 * `prepare()` once, fills the input tensors through `input(i)`, calls `invoke()`, and
 * reads `output(i)`. Pointers
 * returned by input()/output() are valid until the next invoke() (the dynamic allocator
 * may move tensors during an inference).
 */
#ifndef NNRT_MODEL_H_
#define NNRT_MODEL_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/defs.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Shape, type and quantisation of a model input or output. */
typedef struct {
    const char *name;       /**< tensor name from the .tflite file */
    nnrt_dtype_t dtype;     /**< element type */
    uint8_t rank;           /**< number of dims, 0..NNRT_MAX_DIMS */
    int32_t dims[NNRT_MAX_DIMS]; /**< shape, outermost first ([N,H,W,C]) */
    float scale;            /**< quantisation scale (0 if not quantised) */
    int32_t zero_point;     /**< quantisation zero point */
    size_t bytes;           /**< size of the tensor data in bytes */
} nnrt_tensor_desc_t;

struct nnrt_extflash; /* nnrt/extflash.h */

/** A compiled model. */
typedef struct {
    const char *name;                   /**< model name */
    uint32_t n_inputs;                  /**< number of inputs */
    uint32_t n_outputs;                 /**< number of outputs */
    const nnrt_tensor_desc_t *inputs;   /**< [n_inputs] descriptors */
    const nnrt_tensor_desc_t *outputs;  /**< [n_outputs] descriptors */
    size_t arena_bytes;                 /**< bytes of the activation arena */
    void *(*input)(uint32_t i);         /**< where to write input i before invoke() */
    void *(*output)(uint32_t i);        /**< where output i is after invoke() */
    nnrt_status_t (*invoke)(void);      /**< run one inference */
    /**
     * Models whose weights stream from external flash (`nnopt optimize --swap`):
     * `<name>_swap_attach`, which opens the weight blob on an external-flash device
     * (nnrt/extflash.h); invoke() returns NNRT_ERR_IO until it succeeded. NULL when
     * nothing streams.
     */
    nnrt_status_t (*attach)(struct nnrt_extflash *dev);
    /**
     * Stateful models (variable tensors: SVDF, LSTM): `<name>_reset`, which sets the
     * persistent state as at start (each variable tensor to its zero point for int8,
     * else 0, as TFLM does when it allocates the tensors). invoke() carries the state
     * from one inference to the next and resets it before the first one. NULL for
     * models without state.
     */
    nnrt_status_t (*reset)(void);
    /**
     * `<name>_prepare`: each kernel's exported argument check (nnrt/kernels/<family>.h
     * `nnrt_*_check()`, TFLM's Prepare) on the parameters the model's operators run
     * with; NNRT_OK, or the first failing check's status (NNRT_ERR_ARG). Call it once
     * before the first invoke(); invoke() does not (its kernels keep their own guards).
     * NULL: nothing to check.
     */
    nnrt_status_t (*prepare)(void);
} nnrt_model_t;

#ifdef NNRT_TRACE
/**
 * Called by generated code (built with -DNNRT_TRACE) after every operator for each
 * tensor it produced: `tensor` is the tensor index in the .tflite subgraph. The
 * harness records them so tests can compare every intermediate with the oracle.
 */
void nnrt_trace_tensor(uint32_t tensor, const void *data, size_t bytes);
#endif

#ifdef __cplusplus
}
#endif

#endif /* NNRT_MODEL_H_ */
