/**
 * @file detection.h
 * @brief TFLite_Detection_PostProcess (the custom operator TFLM ships for SSD-style
 *        detectors): decode box encodings against anchors, then non-max suppression.
 *
 * Semantics follow TFLM's kernel (tensorflow/lite/micro/kernels/detection_postprocess.cc):
 * float32 inputs only (TFLM's Eval fails on any other type), batch 1.
 *
 * - Decoding, per anchor i (anchor = {y, x, h, w}, encoding = {y, x, h, w}, in double
 *   as TFLM computes it): ycenter = (float)(y / y_scale * anchor.h + anchor.y),
 *   half_h = (float)(0.5 * exp(h / h_scale) * anchor.h) (x and w likewise); the box is
 *   {ycenter - half_h, xcenter - half_w, ycenter + half_h, xcenter + half_w} in float.
 *   A box with ymin >= ymax or xmin >= xmax fails the call (NNRT_ERR_ARG), as TFLM's
 *   ValidateBoxes fails the invocation.
 * - Non-max suppression of one score column: the anchors with score >= score_threshold,
 *   in decreasing score order (a stable sort: equal scores keep the lower anchor first),
 *   each taken unless its IoU with an already taken one exceeds iou_threshold, at most
 *   `limit` of them.
 * - Fast NMS (use_regular_nms = 0, one class per detection): each anchor's best class
 *   (the first of equal maxima) and its score; NMS over those with limit
 *   max_detections. Outputs past num_detections are zero (TFLM leaves them as they
 *   were).
 * - Regular NMS: NMS per class with limit detections_per_class, the running top
 *   max_detections over all classes kept after each class (equal scores: the earlier
 *   candidate first); outputs past num_detections are zero, as in TFLM.
 *
 * Outputs: boxes [max_detections, 4] {ymin, xmin, ymax, xmax}, classes and scores
 * [max_detections], num_detections [1], all float32.
 */
#ifndef NNRT_KERNELS_DETECTION_H_
#define NNRT_KERNELS_DETECTION_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/defs.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int32_t num_boxes;          /**< N anchors, >= 1 */
    int32_t box_stride;         /**< floats per anchor in the box encodings, >= 4 */
    int32_t num_classes;        /**< classes without background, >= 1 */
    int32_t class_stride;       /**< num_classes or num_classes + 1 (a background column 0) */
    int32_t max_detections;     /**< >= 0 */
    int32_t detections_per_class; /**< regular NMS: >= 1 */
    int32_t use_regular_nms;    /**< 0: fast NMS (one class per detection), 1: regular */
    float score_threshold;      /**< nms_score_threshold */
    float iou_threshold;        /**< nms_iou_threshold, in (0, 1] */
    float y_scale;
    float x_scale;
    float h_scale;
    float w_scale;
} nnrt_detection_postprocess_params_t;

/**
 * Scratch bytes of nnrt_detection_postprocess_f32: 4 * (11 * N + ceil(N / 4)) for fast
 * NMS, plus 4 * 6 * (max_detections + N) for regular NMS (the 16-byte aligned buffer is
 * split in that order: decoded boxes, scores, kept scores/indices, sort order and its
 * merge buffer, selection, best classes, candidate flags, then the regular NMS lists).
 */
static inline size_t nnrt_detection_postprocess_scratch_bytes(int32_t num_boxes,
                                                              int32_t max_detections,
                                                              int32_t use_regular_nms)
{
    size_t n = (size_t)num_boxes;
    size_t bytes = 4u * (11u * n + (n + 3u) / 4u);
    if (use_regular_nms) {
        bytes += 4u * 6u * ((size_t)max_detections + n);
    }
    return bytes;
}

/**
 * box_encodings [N, box_stride], class_scores [N, class_stride], anchors [N, 4]:
 * float32. out_boxes [max_detections * 4], out_classes and out_scores
 * [max_detections], out_num [1]. scratch: nnrt_detection_postprocess_scratch_bytes,
 * 4-byte aligned.
 */
nnrt_status_t nnrt_detection_postprocess_f32(const nnrt_detection_postprocess_params_t *p,
                                             const float *box_encodings,
                                             const float *class_scores,
                                             const float *anchors, float *out_boxes,
                                             float *out_classes, float *out_scores,
                                             float *out_num, void *scratch);

#ifdef __cplusplus
}
#endif

#endif /* NNRT_KERNELS_DETECTION_H_ */
