"""Accumulates IR tensors and ops while an ONNX graph is imported, then makes a Graph.

Only :mod:`nnopt.ir`'s public dataclasses are built; ops are numbered in emission order
and tensors by position, as :meth:`nnopt.ir.Graph.verify` requires. A CONCATENATION of
more than :data:`MAX_CONCAT_INPUTS` inputs is built as a tree of concatenations of at
most that many (TFLM's limit), so the graph ``nnopt convert`` writes runs in TFLM.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ...cdefs import DType
from ...ir import ConcatOptions, Graph, NoOptions, Op, OpOptions, Quant, Tensor

_DTYPE_OF = {np.dtype(np.float32): DType.FLOAT32, np.dtype(np.int8): DType.INT8,
             np.dtype(np.int32): DType.INT32, np.dtype(np.int16): DType.INT16,
             np.dtype(np.uint8): DType.UINT8, np.dtype(np.int64): DType.INT64,
             np.dtype(np.bool_): DType.BOOL}


#: TFLM's CONCATENATION takes at most this many inputs (``kMaxInputNum``, its
#: concatenation kernel; the tflite-micro interpreter refuses more at Prepare).
MAX_CONCAT_INPUTS = 10


def dtype_of(arr: np.ndarray) -> DType:
    return _DTYPE_OF[arr.dtype]


@dataclass
class GraphBuilder:
    name: str
    tensors: list[Tensor] = field(default_factory=list)
    ops: list[Op] = field(default_factory=list)
    producer: dict[int, int] = field(default_factory=dict)  # tensor -> position in ops

    def tensor(self, name: str, shape: tuple[int, ...], dtype: DType,
               quant: Quant | None = None) -> int:
        t = Tensor(len(self.tensors), name, tuple(int(d) for d in shape), dtype, quant)
        self.tensors.append(t)
        return t.index

    def const(self, name: str, arr: np.ndarray, quant: Quant | None = None) -> int:
        a = np.ascontiguousarray(arr)
        t = Tensor(len(self.tensors), name, tuple(int(d) for d in a.shape), dtype_of(a),
                   quant, a.tobytes())
        self.tensors.append(t)
        return t.index

    def op(self, opcode: str, inputs: list[int], outputs: list[int],
           options: OpOptions | None = None) -> Op:
        if opcode == "CONCATENATION" and len(inputs) > MAX_CONCAT_INPUTS \
                and isinstance(options, ConcatOptions):
            inputs = self._concat_groups(inputs, outputs[0], options.axis)
        op = Op(len(self.ops), opcode, tuple(inputs), tuple(outputs),
                options if options is not None else NoOptions())
        for t in outputs:
            self.producer[t] = len(self.ops)
        self.ops.append(op)
        return op

    def _concat_groups(self, inputs: list[int], output: int, axis: int) -> list[int]:
        """Consecutive runs of at most MAX_CONCAT_INPUTS inputs concatenated (no
        activation) into tensors like ``output``: the final concatenation's inputs."""
        y = self.tensors[output]
        ax = axis % len(y.shape)
        while len(inputs) > MAX_CONCAT_INPUTS:
            groups = [inputs[i:i + MAX_CONCAT_INPUTS]
                      for i in range(0, len(inputs), MAX_CONCAT_INPUTS)]
            inputs = []
            for g in groups:
                if len(g) == 1:
                    inputs.append(g[0])
                    continue
                shape = list(y.shape)
                shape[ax] = sum(self.tensors[t].shape[ax] for t in g)
                t = self.tensor(f"{y.name}.part{len(self.tensors)}", tuple(shape), y.dtype,
                                y.quant)
                self.op("CONCATENATION", g, [t], ConcatOptions(axis))
                inputs.append(t)
        return inputs

    def producing_op(self, tensor: int) -> Op | None:
        k = self.producer.get(tensor)
        return self.ops[k] if k is not None else None

    def set_options(self, op: Op, options: OpOptions) -> None:
        self.ops[op.index] = replace(op, options=options)

    def graph(self, inputs: list[int], outputs: list[int]) -> Graph:
        return Graph(self.name, tuple(self.tensors), tuple(self.ops), tuple(inputs),
                     tuple(outputs))
