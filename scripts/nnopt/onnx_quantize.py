"""int8 post-training quantisation of ONNX models, done by ``onnxruntime.quantization``.

MCU defaults (what nnopt's int8 kernels and TFLM want): QDQ format, int8 activations
(asymmetric, per tensor), int8 weights symmetric per channel, int32 bias; calibration by
min/max over the samples of a ``.npz`` file. onnxruntime is needed for this only (the
``quantize`` extra): :func:`quantize_onnx` names it when it is missing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .errors import ModelError, NnoptError


def _ort_quantization() -> Any:
    try:
        from onnxruntime import quantization
    except ImportError as err:
        raise NnoptError("nnopt quantize needs onnxruntime (its quantisation tool does the "
                         "work)", hint="pip install 'nnopt[quantize]' (or onnxruntime)"
                         ) from err
    return quantization


def calibration_samples(npz: Path, inputs: Mapping[str, tuple[int, ...]]
                        ) -> list[dict[str, np.ndarray]]:
    """The samples of a calibration file: one array per model input, named after it (a
    single-input model may use any name), shaped (samples, *input shape) or, for a
    batch-1 input, (samples, *input shape without the batch)."""
    try:
        with np.load(npz) as data:
            arrays = {k: np.asarray(data[k]) for k in data.files}
    except FileNotFoundError as err:
        raise NnoptError(f"calibration file not found: {npz}") from err
    except Exception as err:
        raise NnoptError(f"{npz} is not a .npz file ({type(err).__name__})",
                         hint="write it with numpy.savez(path, input=samples)") from err
    if len(inputs) == 1 and len(arrays) == 1:
        arrays = {next(iter(inputs)): next(iter(arrays.values()))}
    missing = sorted(set(inputs) - set(arrays))
    if missing:
        raise NnoptError(f"{npz} has no array for input(s) {', '.join(missing)}",
                         hint="name the arrays after the model inputs: " + ", ".join(inputs))
    per_input: dict[str, np.ndarray] = {}
    for name, shape in inputs.items():
        a = arrays[name].astype(np.float32)
        if a.shape == shape:
            a = a[None]
        elif shape and shape[0] == 1 and a.shape[1:] == shape[1:] and a.ndim == len(shape):
            a = a[:, None]
        elif a.shape[1:] != shape:
            raise NnoptError(f"{npz}: array {name!r} has shape {list(a.shape)}; input "
                             f"{name} is {list(shape)}",
                             hint="stack the samples on a new leading axis: "
                             f"(samples, {', '.join(map(str, shape))})")
        per_input[name] = a
    counts = {a.shape[0] for a in per_input.values()}
    if len(counts) != 1 or 0 in counts:
        raise NnoptError(f"{npz}: the inputs have different or zero numbers of samples",
                         hint="give every input the same number of samples")
    n = counts.pop()
    return [{k: v[i] for k, v in per_input.items()} for i in range(n)]


def quantize_onnx(model: Path, calibration: Path, output: Path) -> int:
    """Write the int8 QDQ model; returns the number of calibration samples used."""
    import onnx

    q = _ort_quantization()
    try:
        m = onnx.load(str(model))
    except Exception as err:
        raise ModelError(f"{model} is not a readable ONNX model ({type(err).__name__})",
                         hint="nnopt quantize takes an ONNX float32 model") from err
    inits = {t.name for t in m.graph.initializer}
    shapes: dict[str, tuple[int, ...]] = {}
    for i in m.graph.input:
        if i.name in inits:
            continue
        dims = i.type.tensor_type.shape.dim
        if any(not d.HasField("dim_value") or d.dim_value < 1 for d in dims):
            raise NnoptError(f"{model}: input {i.name!r} has dynamic dimensions",
                             hint="export the model with fixed input shapes")
        shapes[i.name] = tuple(int(d.dim_value) for d in dims)
    samples = calibration_samples(calibration, shapes)

    class Reader(q.CalibrationDataReader):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            self._it: Iterator[dict[str, np.ndarray]] = iter(samples)

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self._it, None)

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # onnxruntime's advice to pre-process goes to the root log
    try:
        q.quantize_static(
            str(model), str(output), Reader(), quant_format=q.QuantFormat.QDQ,
            per_channel=True, activation_type=q.QuantType.QInt8,
            weight_type=q.QuantType.QInt8, calibrate_method=q.CalibrationMethod.MinMax,
            extra_options={"ActivationSymmetric": False, "WeightSymmetric": True},
            calibration_providers=["CPUExecutionProvider"])
    except Exception as err:
        text = str(err).splitlines()[0][:300] if str(err) else type(err).__name__
        raise NnoptError(f"onnxruntime could not quantise {model}: {text}",
                         hint="check that the model runs in onnxruntime") from err
    finally:
        root.setLevel(level)
    return len(samples)
