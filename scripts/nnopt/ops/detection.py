"""TFLite_Detection_PostProcess, the custom operator TFLM ships for SSD-style detectors
(box decoding against anchors + non-max suppression): its flexbuffer options and traits.
The lowering is in :mod:`nnopt.lowering.detection`."""

from __future__ import annotations

from typing import Any

import numpy as np
from flatbuffers import flexbuffers  # type: ignore[import-untyped]

from ..errors import ModelError
from ..ir import DetectionPostProcessOptions, OpOptions
from ..lowering import detection as detection_lowering
from .base import OpDef, Options, audited, tflm

CUSTOM_CODE = "TFLite_Detection_PostProcess"


def _read(op: Any) -> OpOptions:
    """The options as TFLM's Init reads them: a missing key is 0 (false), except
    detections_per_class (100); floats are read as float32 (flexbuffers' AsFloat)."""
    raw = op.CustomOptionsAsNumpy().tobytes() if op.CustomOptionsLength() else b""
    if not raw:
        return _from_map({})
    try:
        root = flexbuffers.Loads(raw)
    except Exception as err:  # the flexbuffer reader fails in many ways on corrupt input
        raise ModelError(f"{CUSTOM_CODE}: its custom options are not a flexbuffer "
                         f"({type(err).__name__}: {err})",
                         hint="re-export the model; the options come from the converter "
                         "(tf.lite) or object-detection API export") from err
    if not isinstance(root, dict):
        raise ModelError(f"{CUSTOM_CODE}: its custom options are a flexbuffer "
                         f"{type(root).__name__}, not a map",
                         hint="re-export the model")
    return _from_map(root)


def _from_map(m: dict[str, Any]) -> DetectionPostProcessOptions:
    def num(key: str, default: float) -> Any:
        v = m.get(key)
        if v is None:
            return default
        if not isinstance(v, (bool, int, float)):
            raise ModelError(f"{CUSTOM_CODE}: option {key} is {v!r}, not a number",
                             hint="re-export the model")
        return v

    def i(key: str, default: int = 0) -> int:
        return int(num(key, default))

    def f(key: str) -> float:  # flexbuffers' AsFloat: float32
        return float(np.float32(num(key, 0.0)))

    return DetectionPostProcessOptions(
        max_detections=i("max_detections"),
        max_classes_per_detection=i("max_classes_per_detection"),
        detections_per_class=i("detections_per_class", 100),
        use_regular_nms=bool(num("use_regular_nms", False)),
        nms_score_threshold=f("nms_score_threshold"), nms_iou_threshold=f("nms_iou_threshold"),
        num_classes=i("num_classes"), y_scale=f("y_scale"), x_scale=f("x_scale"),
        h_scale=f("h_scale"), w_scale=f("w_scale"))


def encode(o: OpOptions) -> bytes:
    """The options as the flexbuffer map TFLM's kernel reads (``nnopt convert``)."""
    if not isinstance(o, DetectionPostProcessOptions):
        raise TypeError(f"unsupported options object {o!r}")
    fbb = flexbuffers.Builder()
    with fbb.Map():
        for key in ("max_detections", "max_classes_per_detection", "detections_per_class",
                    "num_classes"):
            fbb.Int(key, int(getattr(o, key)))
        fbb.Bool("use_regular_nms", bool(o.use_regular_nms))
        for key in ("nms_score_threshold", "nms_iou_threshold", "y_scale", "x_scale",
                    "h_scale", "w_scale"):
            fbb.Float(key, float(getattr(o, key)))
    return bytes(fbb.Finish())


# Not element-wise, no alias: four float32 outputs of their own, and scratch for the
# decoded boxes, the per-anchor scores and the sort.
DEFINITIONS = (
    OpDef(CUSTOM_CODE, "DET_PP", detection_lowering.DETECTION_POST_PROCESS,
          Options(None, _read, encode=encode), custom=True, blob=False),
)


# what TFLM's kernels take (nnopt.ops.base.TflmKernel: the audit docs/operators.md shows)
DEFINITIONS = audited(DEFINITIONS, {
    "TFLite_Detection_PostProcess": tflm("detection_postprocess.cc", "float32"),
})
