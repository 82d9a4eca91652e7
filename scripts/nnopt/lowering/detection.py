"""TFLite_Detection_PostProcess -> ``nnrt_detection_postprocess_f32``
(``nnrt/kernels/detection.h``).

Supported (bit-exact with TFLM's kernel, ``kernels/detection_postprocess.cc``): float32
box encodings ``[1, N, >= 4]``, class predictions ``[1, N, num_classes (+ 1
background)]`` and anchors ``[N, 4]``, four float32 outputs (boxes ``[1, M, 4]``,
classes and scores ``[1, M]``, num_detections ``[1]``, M = max_detections); fast NMS
with one class per detection and regular NMS. Refused by name: int8/uint8 inputs (TFLM's
Eval takes float32 only and fails on them; dequantize before the op), fast NMS with
more than one class per detection (TFLM's output indexing writes past its outputs
then), and the option values TFLM's kernel rejects (IoU threshold outside (0, 1],
negative max_detections, detections_per_class < 1 with regular NMS).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..cdefs import DType
from ..ir import DetectionPostProcessOptions, Graph, Op, Tensor
from .base import EmitContext, LoweringBase
from .call import Body
from .common import c_call, c_params, refuse, tensor_desc

_SUPPORTED = ("float32 box encodings [1,N,>=4], class scores [1,N,C or C+1] and "
              "anchors [N,4]; float32 outputs [1,M,4], [1,M], [1,M], [1] "
              "(M = max_detections); fast NMS with max_classes_per_detection 1 or "
              "regular NMS; 0 < nms_iou_threshold <= 1")


@dataclass(frozen=True)
class _Operands:
    boxes: Tensor
    scores: Tensor
    anchors: Tensor
    outputs: tuple[Tensor, Tensor, Tensor, Tensor]
    options: DetectionPostProcessOptions


def _operands(graph: Graph, op: Op) -> _Operands:
    if len(op.inputs) != 3 or min(op.inputs) < 0 or len(op.outputs) != 4:
        raise refuse(op, f"has {len(op.inputs)} inputs and {len(op.outputs)} outputs",
                     "3 inputs (box encodings, class scores, anchors) and 4 outputs")
    boxes, scores, anchors = (graph.tensors[t] for t in op.inputs)
    o_boxes, o_classes, o_scores, o_num = (graph.tensors[t] for t in op.outputs)
    o = op.options
    if not isinstance(o, DetectionPostProcessOptions):
        raise refuse(op, "has no detection post-process options", _SUPPORTED)
    for t in (boxes, scores, anchors, o_boxes, o_classes, o_scores, o_num):
        if t.dtype != DType.FLOAT32:
            raise refuse(op, f"{tensor_desc(t)} is not float32 (TFLM's kernel takes "
                         "float32 only: dequantize its inputs first)", _SUPPORTED)
    if len(boxes.shape) != 3 or boxes.shape[0] != 1 or boxes.shape[2] < 4 \
            or boxes.shape[1] < 1:
        raise refuse(op, f"box encodings {tensor_desc(boxes)} are not [1, N, >= 4]",
                     _SUPPORTED)
    n = boxes.shape[1]
    nc = o.num_classes
    if nc < 1:
        raise refuse(op, f"num_classes is {nc}", "num_classes >= 1")
    if len(scores.shape) != 3 or scores.shape[:2] != (1, n) \
            or scores.shape[2] not in (nc, nc + 1):
        raise refuse(op, f"class scores {tensor_desc(scores)} are not [1, {n}, {nc} or "
                     f"{nc + 1}] (num_classes {nc}, with or without background)",
                     _SUPPORTED)
    if anchors.shape != (n, 4):
        raise refuse(op, f"anchors {tensor_desc(anchors)} are not [{n}, 4]", _SUPPORTED)
    m = o.max_detections
    if m < 0:
        raise refuse(op, f"max_detections is {m}", "max_detections >= 0")
    for t, count in ((o_boxes, 4 * m), (o_classes, m), (o_scores, m), (o_num, 1)):
        if t.num_elements != count:
            raise refuse(op, f"output {tensor_desc(t)} does not hold {count} values "
                         f"(max_detections {m})", _SUPPORTED)
    if not 0.0 < o.nms_iou_threshold <= 1.0:
        raise refuse(op, f"nms_iou_threshold is {o.nms_iou_threshold} (TFLM's kernel "
                     "fails on it)", "0 < nms_iou_threshold <= 1")
    floats = {"nms_score_threshold": o.nms_score_threshold, "y_scale": o.y_scale,
              "x_scale": o.x_scale, "h_scale": o.h_scale, "w_scale": o.w_scale}
    for name, v in floats.items():
        if not math.isfinite(v):
            raise refuse(op, f"{name} is {v}", "finite option values")
    if o.use_regular_nms:
        if o.detections_per_class < 1:
            raise refuse(op, f"detections_per_class is {o.detections_per_class} with "
                         "regular NMS (TFLM's kernel fails on it)",
                         "detections_per_class >= 1")
    else:
        if o.max_classes_per_detection < 1:
            raise refuse(op, f"max_classes_per_detection is {o.max_classes_per_detection}"
                         " (TFLM's kernel fails on it)", "max_classes_per_detection >= 1")
        if min(o.max_classes_per_detection, nc) > 1:
            raise refuse(op, f"fast NMS with {min(o.max_classes_per_detection, nc)} "
                         "classes per detection (TFLM's kernel then writes past its "
                         "outputs)", "max_classes_per_detection 1 (or regular NMS)")
    return _Operands(boxes, scores, anchors, (o_boxes, o_classes, o_scores, o_num), o)


def scratch_bytes(num_boxes: int, max_detections: int, regular: bool) -> int:
    """As ``nnrt_detection_postprocess_scratch_bytes`` (detection.h) computes it."""
    n = num_boxes
    return 4 * (11 * n + (n + 3) // 4) + (4 * 6 * (max_detections + n) if regular else 0)


class DetectionPostProcessLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/detection.h",)
    dtypes: Sequence[str] = ("float32",)

    def check(self, graph: Graph, op: Op) -> None:
        _operands(graph, op)

    def scratch_bytes(self, graph: Graph, op: Op) -> int:
        s = _operands(graph, op)
        return scratch_bytes(s.boxes.shape[1], s.options.max_detections,
                             s.options.use_regular_nms)

    def emit(self, ctx: EmitContext) -> Body:
        s = _operands(ctx.graph, ctx.op)
        o = s.options
        fields = {"num_boxes": s.boxes.shape[1], "box_stride": s.boxes.shape[2],
                  "num_classes": o.num_classes, "class_stride": s.scores.shape[2],
                  "max_detections": o.max_detections,
                  "detections_per_class": o.detections_per_class,
                  "use_regular_nms": int(o.use_regular_nms),
                  "score_threshold": o.nms_score_threshold,
                  "iou_threshold": o.nms_iou_threshold,
                  "y_scale": o.y_scale, "x_scale": o.x_scale, "h_scale": o.h_scale,
                  "w_scale": o.w_scale}
        return [*c_params("nnrt_detection_postprocess_params_t", fields),
                *c_call("nnrt_detection_postprocess_f32",
                        ["&params", ctx.ptr(s.boxes.index), ctx.ptr(s.scores.index),
                         ctx.ptr(s.anchors.index),
                         *(ctx.ptr(t.index) for t in s.outputs), ctx.scratch])]


DETECTION_POST_PROCESS = DetectionPostProcessLowering()
