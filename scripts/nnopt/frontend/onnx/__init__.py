"""ONNX (what ``torch.onnx.export`` writes) -> :class:`nnopt.ir.Graph`.

:func:`load_onnx_bytes` prepares the model (:mod:`.prepare`: opset upgrade, shape
inference, constant folding, BatchNormalization folding) and imports it
(:mod:`.importer`, :mod:`.handlers`); uint8 QDQ runs on the int8 kernels
(:mod:`.uint8`), 3-D Conv and pooling on the 2-D ones (:mod:`.depth`). The model's
inputs and outputs keep their ONNX shape, layout and dtype; inside, activations are
NHWC where nnopt's kernels want it, with TRANSPOSE ops at the boundary (RESHAPE where
only size-1 axes move).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ...errors import ModelError, NnoptError, UnsupportedError
from ...ir import Graph
from .. import validate
from .control import parse_input_values
from .depth import split_depth
from .handlers import HANDLERS, QUANT_INPUTS
from .importer import Importer
from .prepare import is_onnx, looks_like_onnx, parse_input_shapes, prepare
from .uint8 import shift_uint8

__all__ = ["internal_layout", "is_onnx", "load_onnx_bytes", "looks_like_onnx",
           "parse_input_shapes", "parse_input_values"]


def load_onnx_bytes(data: bytes, name: str = "model", source: str = "<bytes>",
                    input_shapes: Mapping[str, tuple[int, ...]] | None = None,
                    input_values: Mapping[str, tuple[float, ...]] | None = None) -> Graph:
    prep = prepare(data, name, source, input_shapes, input_values)
    shift_uint8(prep)  # uint8 QDQ onto the int8 kernels
    split_depth(prep)  # 3-D window ops as 2-D ones over depth slices
    prep.index_consumers()
    try:
        graph = Importer(prep, source, HANDLERS, QUANT_INPUTS).run()
    except UnsupportedError as err:
        wide = [n for n in prep.inputs if prep.dtypes.get(n) == np.int64]
        if not wide:
            raise
        pin = (f"int64 input {wide[0]!r} is computed at run time (held as int32); if it "
               "holds a fixed value (e.g. a sample rate), pin it at build time: "
               f"--input-value {wide[0]}=V")
        raise UnsupportedError(err.message, hint=f"{err.hint}; {pin}" if err.hint else pin
                               ) from err
    try:
        graph.verify()
    except NnoptError as err:
        raise ModelError(f"{source}: the imported graph is invalid: {err.message}",
                         hint="this is a bug in nnopt's ONNX importer; report it with "
                         "the model") from err
    validate.check_quantization(graph, source)  # QDQ scales/zero points, as for .tflite
    return graph


def internal_layout(graph: Graph) -> str:
    """What the report says about layout: NHWC inside when any 4-D activation exists."""
    four_d = any(len(t.shape) == 4 and not t.is_constant for t in graph.tensors)
    return "NHWC inside (ONNX layout at the inputs and outputs)" if four_d \
        else "ONNX layout throughout"
