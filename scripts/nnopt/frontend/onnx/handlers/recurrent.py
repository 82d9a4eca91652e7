"""LSTM, GRU and RNN (float32): unrolled over the (build-time) sequence onto
FULLY_CONNECTED, ADD/SUB/MUL, LOGISTIC/TANH, SLICE and CONCATENATION.

ONNX semantics (onnx.ai operator docs, default activations): each time step computes
its input projection ``x W^T + Wb [+ Rb]`` (one FULLY_CONNECTED per step, so the arena
never holds the whole sequence's), adds the recurrent projection ``H R^T`` and applies
the gates:

- LSTM (gates i, o, f, c): ``C = f*C + i*tanh(c)``, ``H = o*tanh(C)``;
- GRU (gates z, r, h): ``n = tanh(x_h + r*(H R_h^T + Rb_h))`` (linear_before_reset=1)
  or ``tanh(x_h + (r*H) R_h^T + Rb_h)`` (0), ``H = n + z*(H - n)``;
- RNN: ``H = tanh(x + H R^T)``.

Directions forward, reverse and bidirectional; ``initial_h``/``initial_c`` may be model
inputs and ``Y_h``/``Y_c`` model outputs (how stateful models carry state between
calls); both layouts. Attributes beyond these (clip, other activations, input_forget,
peepholes, sequence_lens shorter than the sequence) are refused by name.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....ir import FullyConnectedOptions
from ..importer import Importer
from ..prepare import Node
from .common import concat_copies, emit_binary, emit_unary, slice_tensor
from .registry import handler

_GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
_DEFAULT_ACTS = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"],
                 "RNN": ["Tanh"]}
MAX_STEPS = 1024  # time steps x directions unrolled at most (each is ~12 ops)
_SUPPORTED = ("LSTM/GRU/RNN with the default activations, no clip, no peepholes, "
              "input_forget=0, full-length sequences")


@dataclass
class _Cell:
    """One direction's build-time data."""

    W: np.ndarray  # [G*H, I]
    R: np.ndarray  # [G*H, H]
    Wb: np.ndarray  # [G*H]
    Rb: np.ndarray  # [G*H]


def _attr_str(node: Node, key: str, default: str) -> str:
    v = node.attrs.get(key, default)
    return v.decode() if isinstance(v, bytes) else str(v)


def _check_attrs(im: Importer, node: Node) -> None:
    op = node.op_type
    if "clip" in node.attrs:
        raise im.refuse(f"clip={node.attrs['clip']} is not supported", _SUPPORTED)
    acts = [a.decode() if isinstance(a, bytes) else str(a)
            for a in node.attrs.get("activations", [])]
    nd = 2 if _attr_str(node, "direction", "forward") == "bidirectional" else 1
    if acts and acts != _DEFAULT_ACTS[op] * nd:
        raise im.refuse(f"activations {acts} are not the defaults {_DEFAULT_ACTS[op]}",
                        _SUPPORTED)
    for key in ("activation_alpha", "activation_beta"):
        if node.attrs.get(key):
            raise im.refuse(f"{key} is not supported", _SUPPORTED)
    if op == "LSTM" and int(node.attrs.get("input_forget", 0)):
        raise im.refuse("input_forget=1 (coupled input and forget gates) is not supported",
                        _SUPPORTED)
    if op == "LSTM" and im.opt_input(node, 7):
        raise im.refuse("peephole weights (input P) are not supported", _SUPPORTED)
    if op == "GRU" and int(node.attrs.get("linear_before_reset", 0)) not in (0, 1):
        raise im.refuse("linear_before_reset must be 0 or 1", _SUPPORTED)


@handler("LSTM", "GRU", "RNN")
def recurrent(im: Importer, node: Node) -> None:
    _check_attrs(im, node)
    op = node.op_type
    G = _GATES[op]
    H = int(node.attrs["hidden_size"])
    layout = int(node.attrs.get("layout", 0))
    direction = _attr_str(node, "direction", "forward")
    if direction not in ("forward", "reverse", "bidirectional"):
        raise im.refuse(f"direction {direction!r}", "forward, reverse, bidirectional")
    x_name = node.inputs[0]
    xs = im.shape(x_name)
    seq, batch = (xs[0], xs[1]) if layout == 0 else (xs[1], xs[0])
    size = xs[2]
    W, R = im.const(node.inputs[1]), im.const(node.inputs[2])
    nd = W.shape[0]
    if seq * nd > MAX_STEPS:
        raise im.refuse(f"{seq} time steps x {nd} direction(s) to unroll",
                        f"at most {MAX_STEPS} steps (a shorter --input-shape sequence, "
                        "run in chunks with the state carried)")
    bname = im.opt_input(node, 3)
    B = im.const(bname).astype(np.float64) if bname else np.zeros((nd, 2 * G * H))
    lens = im.opt_input(node, 4)
    if lens and (not im.is_const(lens) or np.any(im.const(lens) != seq)):
        raise im.refuse("sequence_lens shorter than the sequence (or not constant)",
                        _SUPPORTED)
    cells = [_Cell(W[d].astype(np.float64), R[d].astype(np.float64), B[d, :G * H],
                   B[d, G * H:]) for d in range(nd)]
    # X as [seq * batch, input] (time-major rows)
    x = im.act(x_name, (0, 1, 2) if layout == 0 else (1, 0, 2))
    x2 = im._reshape(x, (seq * batch, size), f"{node.name}.x2d")
    need = [bool(o) and (o in im.p.outputs or bool(im.p.consumers.get(o)))
            for o in list(node.outputs) + [""] * (3 - len(node.outputs))]
    ys: list[int] = []
    hs: list[int] = []
    cs: list[int] = []
    for d, cell in enumerate(cells):
        rev = direction == "reverse" or d == 1
        name = f"{node.name}.d{d}"
        h = _state(im, node, 5, d, batch, H, layout, f"{name}.h0")
        c = _state(im, node, 6, d, batch, H, layout, f"{name}.c0") if op == "LSTM" else -1
        lbr = op == "GRU" and int(node.attrs.get("linear_before_reset", 0)) == 1
        # GRU: Rb_h stays with the recurrent projection (inside r * (...) or after it)
        in_bias = cell.Wb + cell.Rb if op != "GRU" else np.concatenate(
            [cell.Wb[:2 * H] + cell.Rb[:2 * H], cell.Wb[2 * H:]])
        steps: list[int] = [0] * seq
        for t in (range(seq - 1, -1, -1) if rev else range(seq)):
            s = f"{name}.t{t}"
            # the input projection step by step: only [batch, G*H] of it is ever live
            xt = _fc(im, slice_tensor(im, x2, [t * batch, 0], [batch, size], f"{s}.xin"),
                     cell.W, in_bias, f"{s}.x")
            if op == "LSTM":
                h, c = _lstm_step(im, xt, h, c, cell, H, batch, s)
            elif op == "GRU":
                h = _gru_step(im, xt, h, cell, H, batch, lbr, s)
            else:
                h = emit_unary(im, emit_binary(im, xt, _fc(im, h, cell.R, None, f"{s}.hr"),
                                               "ADD", f"{s}.pre"), "TANH", f"{s}.h")
            steps[t] = h
        ys.append(concat_copies(im, [im._reshape(y, (1, 1, batch, H), f"{name}.y{t}")
                                     for t, y in enumerate(steps)], 0, f"{name}.y")
                  if need[0] else -1)
        hs.append(im._reshape(h, (1, batch, H), f"{name}.hn"))
        if op == "LSTM":
            cs.append(im._reshape(c, (1, batch, H), f"{name}.cn"))
    outs = list(node.outputs) + [""] * (3 - len(node.outputs))
    if need[0]:
        y = concat_copies(im, ys, 1, outs[0])  # [seq, nd, batch, H]
        im.bind(outs[0], y, (0, 1, 2, 3) if layout == 0 else (1, 2, 0, 3))
    for k, parts in ((1, hs), (2, cs)):
        if need[k] and parts:
            t_ = concat_copies(im, parts, 0, outs[k])  # [nd, batch, H]
            im.bind(outs[k], t_, (0, 1, 2) if layout == 0 else (1, 0, 2))


def _state(im: Importer, node: Node, k: int, d: int, batch: int, H: int, layout: int,
           name: str) -> int:
    """Direction ``d``'s initial state (input ``k``) as [batch, H]; zeros when absent."""
    src = im.opt_input(node, k)
    if not src:
        return im.b.const(name, np.zeros((batch, H), np.float32))
    perm = (0, 1, 2) if layout == 0 else (1, 0, 2)  # IR [nd, batch, H]
    t = im.const_tensor(src, perm) if im.is_const(src) else im.act(src, perm)
    sl = slice_tensor(im, t, [d, 0, 0], [1, batch, H], f"{name}.slice")
    return im._reshape(sl, (batch, H), name)


def _fc(im: Importer, x: int, W: np.ndarray, bias: np.ndarray | None, name: str) -> int:
    """x @ W^T + bias, x [rows, in], W [units, in] (a constant, one IR tensor however
    many time steps use it)."""
    rows = im.b.tensors[x].shape[0]
    w = _weight(im, W, f"{name}.w")
    b = _weight(im, bias, f"{name}.b") if bias is not None and np.any(bias) else -1
    y = im.b.tensor(name, (rows, W.shape[0]), im.b.tensors[x].dtype)
    im.b.op("FULLY_CONNECTED", [x, w, b], [y], FullyConnectedOptions())
    return y


def _weight(im: Importer, arr: np.ndarray, name: str) -> int:
    data = np.ascontiguousarray(arr.astype(np.float32))
    return im._cached(("rnn-weight", data.shape, data.tobytes()),
                      lambda: im.b.const(name, data))


def _cols(im: Importer, x: int, start: int, width: int, batch: int, name: str) -> int:
    return slice_tensor(im, x, [0, start], [batch, width], name)


def _lstm_step(im: Importer, xt: int, h: int, c: int, cell: _Cell, H: int, batch: int,
               s: str) -> tuple[int, int]:
    g = emit_binary(im, xt, _fc(im, h, cell.R, None, f"{s}.hr"), "ADD", f"{s}.g")
    iof = emit_unary(im, _cols(im, g, 0, 3 * H, batch, f"{s}.iof_in"), "LOGISTIC", f"{s}.iof")
    cand = emit_unary(im, _cols(im, g, 3 * H, H, batch, f"{s}.c_in"), "TANH", f"{s}.cand")
    i = _cols(im, iof, 0, H, batch, f"{s}.i")
    o = _cols(im, iof, H, H, batch, f"{s}.o")
    f = _cols(im, iof, 2 * H, H, batch, f"{s}.f")
    c = emit_binary(im, emit_binary(im, f, c, "MUL", f"{s}.fc"),
                    emit_binary(im, i, cand, "MUL", f"{s}.ic"), "ADD", f"{s}.c")
    h = emit_binary(im, o, emit_unary(im, c, "TANH", f"{s}.tc"), "MUL", f"{s}.h")
    return h, c


def _gru_step(im: Importer, xt: int, h: int, cell: _Cell, H: int, batch: int, lbr: bool,
              s: str) -> int:
    if lbr:
        rb = np.concatenate([np.zeros(2 * H), cell.Rb[2 * H:]])
        hr = _fc(im, h, cell.R, rb, f"{s}.hr")  # [batch, 3H]
        hzr = _cols(im, hr, 0, 2 * H, batch, f"{s}.hzr")
    else:
        hzr = _fc(im, h, cell.R[:2 * H], None, f"{s}.hzr")
    zr = emit_unary(im, emit_binary(im, _cols(im, xt, 0, 2 * H, batch, f"{s}.xzr"), hzr,
                                    "ADD", f"{s}.zr_in"), "LOGISTIC", f"{s}.zr")
    z = _cols(im, zr, 0, H, batch, f"{s}.z")
    r = _cols(im, zr, H, H, batch, f"{s}.r")
    if lbr:
        rh = emit_binary(im, r, _cols(im, hr, 2 * H, H, batch, f"{s}.hh"), "MUL", f"{s}.rh")
    else:
        rh = _fc(im, emit_binary(im, r, h, "MUL", f"{s}.rhin"), cell.R[2 * H:],
                 cell.Rb[2 * H:], f"{s}.rh")
    n = emit_unary(im, emit_binary(im, _cols(im, xt, 2 * H, H, batch, f"{s}.xh"), rh, "ADD",
                                   f"{s}.n_in"), "TANH", f"{s}.n")
    return emit_binary(im, n, emit_binary(im, z, emit_binary(im, h, n, "SUB", f"{s}.hn"),
                                          "MUL", f"{s}.zd"), "ADD", f"{s}.h")

