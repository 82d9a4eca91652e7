"""C for a tiled stage (``Plan.stages``): one function running the stage patch by patch.

For every patch (raster order, or reverse raster when the plan overlaps the stage's
output with its input that way), the stage's ops run in schedule order on tile
buffers, each op's kernel called with the geometry of its region in that patch. The
geometry is derived here from the regions the plan recorded (nothing is re-planned):
a window op's output region ``R`` reads input rows ``Axis.span(R.y0, R.y1)`` starting
at its input tile's first row and column; per patch, the tables hold the kernel
geometry and byte offsets into the tile (or full tensor) buffers. Constant tables go
to flash (``NNRT_WEIGHTS``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..cdefs import C_TYPE, DTYPE_SIZE
from ..errors import PlanError
from ..ir import Graph, Op
from ..lowering import EmitContext
from ..lowering.call import Params, c_value, render_params
from ..lowering.elementwise import BinaryLowering
from ..ops import known, lowering_for
from ..ops.base import WINDOW
from ..plan import Plan, StageEntry, TileEntry
from ..planfacts import PlanFacts
from .views import SpecCore, check_spec, kernel_call, memo_consts, spec_core

Region = tuple[int, int, int, int]


@dataclass(frozen=True)
class _Buf:
    """Where one stage tensor lives in a patch: base pointer and the region held."""

    base: str  # C expression (uint8_t *)
    regions: Sequence[Region]  # per patch: region held at base (full tensor: whole)
    row_pixels: Sequence[int]  # per patch: pixels per stored row
    offset: Sequence[int]  # per patch: byte offset of the region's origin from base


def _table(name: str, ctype: str, rows: list[Any], inner: int | None = None) -> str:
    """A constant per-patch table in flash (``inner``: a 2-D table of that width)."""
    body = ",\n".join("    " + c_value(r) for r in rows)
    dims = f"[{len(rows)}]" + (f"[{inner}]" if inner else "")
    return f"NNRT_WEIGHTS static const {ctype} {name}{dims} = {{\n{body}\n}};"


class StageEmitter:
    """Emits the tables and the function of one stage."""

    def __init__(self, stage: StageEntry, index: int, graph: Graph, facts: PlanFacts,
                 ctx_for: Callable[[Op], EmitContext], arena_at: Callable[[int], str]) -> None:
        self.st = stage
        self.idx = index
        self.g = graph
        self.facts = facts
        self.ctx_for = ctx_for
        self.arena_at = arena_at
        self.decls: list[str] = []
        self.headers: set[str] = {"nnrt/kernels/tiling.h"}
        self.tiles = {t.tensor: t for t in stage.tiles}
        self.n = len(next(iter(stage.tiles)).regions)
        self.name = f"stage_{index}"
        self.whole: set[int] = set()  # activations every patch reads whole (broadcast)

    # ----- buffers -----
    def _dims(self, t: int) -> tuple[int, int, int, int]:
        """(H, W, C, element bytes) of tensor t in NHWC terms."""
        x = self.g.tensors[t]
        e = DTYPE_SIZE[x.dtype]
        if self.tiles[t].kind == "input" and t in self._transposed():
            return x.shape[2], x.shape[3], x.shape[1], e
        return x.shape[1], x.shape[2], x.shape[3], e

    def _transposed(self) -> set[int]:
        out = set()
        for i in self.st.ops:
            op = self.g.op_by_index[i]
            if _is(op, "transpose"):
                out.add(op.inputs[0])
        return out

    def buf(self, t: int, ptr: Callable[[int], str]) -> _Buf:
        te = self.tiles[t]
        _h, w, c, e = self._dims(t)
        rs = te.regions
        if te.kind in ("input", "output"):  # the full tensor
            return _Buf(f"(uint8_t *){ptr(t)}", rs, [w] * self.n,
                        [(r[0] * w + r[2]) * c * e for r in rs])
        base = (f"(uint8_t *){ptr(t)}" if te.kind == "tile"
                else f"(uint8_t *){self.arena_at(te.offset)}")
        return _Buf(base, rs, [r[3] - r[2] for r in rs], [0] * self.n)

    # ----- ops -----
    def emit(self, ptr: Callable[[int], str]) -> list[str]:
        st, n = self.st, self.n
        pre: list[str] = []
        body: list[str] = []
        gathered: set[int] = set()
        for i in st.ops:
            op = self.g.op_by_index[i]
            for x in self.g.activations(op):
                te = self.tiles.get(x)
                if te is not None and te.kind == "gather" and x not in gathered:
                    gathered.add(x)
                    body += self._gather(x, ptr)
            ctx = self.ctx_for(op)
            if _is(op, "transpose"):
                body += self._transpose(op, ptr)
            else:
                kind = self._kind(op)
                if kind is None:
                    raise PlanError(f"op {op.index} ({op.opcode}) cannot run in a tile")
                if kind == WINDOW:
                    p, b = self._window(op, ctx, ptr)
                elif _is(op, "concat"):
                    p, b = self._concat(op, ctx, ptr)
                else:
                    p, b = self._binary(op, ptr)
                pre += p
                body += b
            y = op.outputs[0]
            if self.tiles.get(y) is not None and self.tiles[y].kind == "scatter":
                body += self._scatter(y, ptr)
        order = "i" if st.order == "forward" else f"{n - 1}u - i"
        lines = [f"/* stage {self.idx}: ops {', '.join(map(str, st.ops))} in "
                 f"{st.grid[0]}x{st.grid[1]} patches ({st.order} order), "
                 f"{st.macs} MACs (untiled {st.base_macs}) */",
                 f"static nnrt_status_t {self.name}(void)", "{", "    nnrt_status_t s;"]
        lines += ["    " + x for x in pre]
        lines += [f"    for (uint32_t i = 0; i < {n}u; ++i) {{",
                  f"        const uint32_t p = {order};"]
        lines += ["        " + x if x else "" for x in body]
        lines += ["    }", "    return NNRT_OK;", "}"]
        return lines

    def _kind(self, op: Op) -> str | None:
        """The op's access pattern kind (WINDOW, POINT), None when it has none."""
        sp = self.facts.spatial.get(op.index)
        return sp.kind if sp is not None else None

    def _check(self, call: str) -> list[str]:
        return [f"s = {call};", "if (s != NNRT_OK) {", "    return s;", "}"]

    def _region_table(self, t: int, name: str) -> tuple[TileEntry, int]:
        """Declare ``name``, a table of tensor t's patch regions (a row a patch: byte
        offset in the tensor, rows, row bytes); t's tile and its row pitch in bytes."""
        te = self.tiles[t]
        _h, w, c, e = self._dims(t)
        rows = [[(r[0] * w + r[2]) * c * e, r[1] - r[0], (r[3] - r[2]) * c * e]
                for r in te.regions]
        self.decls.append(_table(name, "uint32_t", rows, 3))
        return te, w * c * e

    def _gather(self, x: int, ptr: Callable[[int], str]) -> list[str]:
        name = f"st{self.idx}_g{x}"
        te, pitch = self._region_table(x, name)
        dst = f"(uint8_t *){self.arena_at(te.offset)}"
        return [f"/* gather: the window of tensor {x} this patch reads */",
                *self._check(f"nnrt_copy_2d_x8((const uint8_t *){ptr(x)} + {name}[p][0], "
                             f"{pitch}, {dst}, (int32_t){name}[p][2], "
                             f"(int32_t){name}[p][1], (int32_t){name}[p][2])")]

    def _scatter(self, y: int, ptr: Callable[[int], str]) -> list[str]:
        name = f"st{self.idx}_c{y}"
        te, pitch = self._region_table(y, name)
        src = f"(const uint8_t *){self.arena_at(te.offset)}"
        return [f"/* scatter: this patch's tile of tensor {y} into place */",
                *self._check(f"nnrt_copy_2d_x8({src}, (int32_t){name}[p][2], "
                             f"(uint8_t *){ptr(y)} + {name}[p][0], {pitch}, "
                             f"(int32_t){name}[p][1], (int32_t){name}[p][2])")]

    def _transpose(self, op: Op, ptr: Callable[[int], str]) -> list[str]:
        x, y = op.inputs[0], op.outputs[0]
        tx = self.g.tensors[x]
        _, c, h, w = tx.shape
        e = DTYPE_SIZE[tx.dtype]
        self.headers.add("nnrt/kernels/shape.h")
        rows = []
        for r in self.tiles[y].regions:
            rows.append({"rank": 3, "elem_size": e, "offset": (r[0] * w + r[2]) * e,
                         "dims": [r[1] - r[0], r[3] - r[2], c, 0, 0, 0],
                         "strides": [w * e, e, h * w * e, 0, 0, 0]})
        name = f"st{self.idx}_op{op.index}"
        self.decls.append(_table(name, "nnrt_strided_copy_params_t", rows))
        out = self.buf(y, ptr)
        return [f"/* op {op.index}: TRANSPOSE (NCHW -> NHWC) of this patch's window */",
                *self._check(f"nnrt_strided_copy_x8(&{name}[p], {ptr(x)}, {out.base})")]

    def _window(self, op: Op, ctx: EmitContext, ptr: Callable[[int], str]
                ) -> tuple[list[str], list[str]]:
        sp = self.facts.window(op, "has no window geometry")
        ctx = memo_consts(ctx)
        k = kernel_call(ctx, sp, self.facts, spec=True)
        sc: SpecCore | None = spec_core(ctx, k)  # the op's specialised matrix core
        check_spec(k, sc)
        for h in ("nnrt/kernels/conv.h", "nnrt/kernels/pool.h"):
            if k.ptype.startswith("nnrt_pool" if "pool" in h else "nnrt_conv"):
                self.headers.add(h)
        x, y = op.inputs[0], op.outputs[0]
        xin, yout = self.buf(x, ptr), self.buf(y, ptr)
        _, _, cx, ex = self._dims(x)
        geoms = []
        offs = []
        for p in range(self.n):
            r = self.tiles[y].regions[p]
            t = xin.regions[p]
            lo_h, hi_h = sp.h.span(r[0], r[1])
            lo_w, _hi_w = sp.w.span(r[2], r[3])
            if lo_w != t[2] or lo_h < t[0]:
                raise PlanError(f"stage op {op.index}: patch {p} reads outside its tile")
            g = dict(k.fields["geom"])
            g.update(input_h=hi_h - lo_h, input_w=xin.row_pixels[p],
                     pad_top=sp.h.pad_local(r[0], lo_h), pad_left=sp.w.pad_local(r[2], lo_w),
                     output_h=r[1] - r[0], output_w=r[3] - r[2])
            geoms.append(g)
            in_off = xin.offset[p] + (lo_h - t[0]) * xin.row_pixels[p] * cx * ex
            offs.append([in_off, yout.offset[p]])
        gtype = "nnrt_pool_geom_t" if k.ptype.startswith("nnrt_pool") else "nnrt_conv_geom_t"
        gname = f"st{self.idx}_op{op.index}_geom"
        oname = f"st{self.idx}_op{op.index}_io"
        self.decls.append(_table(gname, gtype, geoms))
        self.decls.append(_table(oname, "uint32_t", offs, 2))
        var = f"op{op.index}"
        pre = [*render_params(k.params, f"{var}_base"), f"{k.ptype} {var} = {var}_base;"]
        x_at = f"(const {k.elem} *)(const void *)({xin.base} + {oname}[p][0])"
        y_at = f"({k.elem} *)(void *)({yout.base} + {oname}[p][1])"
        call = k.expr(var, x_at, y_at, ctx.pointers)
        if sc is not None:
            call = (f"nnrt_spec_conv_gemm_s8(&{var}, &{sc.core}, {x_at}, {y_at}, "
                    f"{k.scratch_expr(ctx.pointers)}, {sc.px2})")
            pre.append(f"(void){sc.entry}; /* runs patch by patch, not whole */")
        body = [f"/* op {op.index}: {op.opcode} on this patch */",
                f"{var}.geom = {gname}[p];", *self._check(call)]
        return pre, body

    def _binary(self, op: Op, ptr: Callable[[int], str]) -> tuple[list[str], list[str]]:
        y = op.outputs[0]
        yt = self.g.tensors[y]
        yout = self.buf(y, ptr)
        _, _, c, e = self._dims(y)
        elem = C_TYPE[yt.dtype]
        self.headers.add("nnrt/kernels/elementwise.h")
        operands: list[tuple[str, list[int], list[list[int]]]] = []
        for t in op.inputs[:2]:
            tt = self.g.tensors[t]
            if tt.is_constant or t in self.whole:  # per-channel or scalar, broadcast
                st = 1 if tt.num_elements == c and c > 1 else 0
                operands.append((ptr(t), [0] * self.n, [[0, 0, st]] * self.n))
                continue
            b = self.buf(t, ptr)
            offs, strides = [], []
            for p in range(self.n):
                r = self.tiles[y].regions[p]
                reg = b.regions[p]
                offs.append(b.offset[p] + ((r[0] - reg[0]) * b.row_pixels[p]
                                           + (r[2] - reg[2])) * c * e)
                strides.append([b.row_pixels[p] * c, c, 1])
            operands.append((b.base, offs, strides))
        bcasts = []
        offs_tab = []
        for p in range(self.n):
            r = self.tiles[y].regions[p]
            dims, s1, s2 = _collapse([r[1] - r[0], r[3] - r[2], c],
                                     operands[0][2][p], operands[1][2][p])
            pad = 6 - len(dims)
            bcasts.append({"rank": len(dims), "dims": [*dims, *[1] * pad],
                           "stride1": [*s1, *[0] * pad], "stride2": [*s2, *[0] * pad]})
            offs_tab.append([operands[0][1][p], operands[1][1][p], yout.offset[p]])
        bname = f"st{self.idx}_op{op.index}_bcast"
        oname = f"st{self.idx}_op{op.index}_io"
        self.decls.append(_table(bname, "nnrt_broadcast_t", bcasts))
        self.decls.append(_table(oname, "uint32_t", offs_tab, 3))
        var = f"op{op.index}"
        low = lowering_for(op)
        assert isinstance(low, BinaryLowering)
        ta, tb = (self.g.tensors[t] for t in op.inputs[:2])
        fn, ptype, fields = low.kernel(op, ta, tb, yt)

        def operand(k: int) -> str:
            base = operands[k][0]
            if self.g.tensors[op.inputs[k]].is_constant or op.inputs[k] in self.whole:
                return f"(const {elem} *){base}"
            return f"(const {elem} *)(const void *)({base} + {oname}[p][{k}])"

        out = f"({elem} *)(void *)({yout.base} + {oname}[p][2])"
        if ptype is None:
            return [], [f"/* op {op.index}: {op.opcode} on this patch */",
                        *self._check(f"{fn}(&{bname}[p], {operand(0)}, "
                                     f"{operand(1)}, {out})")]
        pre = [*render_params(Params(ptype, {"bcast": bcasts[0], **fields}), f"{var}_base"),
               f"{ptype} {var} = {var}_base;"]
        body = [f"/* op {op.index}: {op.opcode} on this patch */", f"{var}.bcast = {bname}[p];",
                *self._check(f"{fn}(&{var}, {operand(0)}, {operand(1)}, {out})")]
        return pre, body

    def _concat(self, op: Op, ctx: EmitContext, ptr: Callable[[int], str]
                ) -> tuple[list[str], list[str]]:
        y = op.outputs[0]
        yout = self.buf(y, ptr)
        _, _, _, e = self._dims(y)
        self.headers.add("nnrt/kernels/shape.h")
        blocks = [self.g.tensors[t].shape[3] * e for t in op.inputs]
        ident = ctx.const_array("blocks", np.asarray(blocks, dtype=np.int32))
        outer = [_area(r) for r in self.tiles[y].regions]
        oname = f"st{self.idx}_op{op.index}_outer"
        self.decls.append(_table(oname, "int32_t", outer))
        var = f"op{op.index}"
        pre = [f"nnrt_concat_params_t {var} = {{1, {len(blocks)}, {ident}}};",
               f"const void *{var}_in[{len(blocks)}];"]
        body = [f"/* op {op.index}: CONCATENATION on this patch */",
                f"{var}.outer = {oname}[p];"]
        for n_, t in enumerate(op.inputs):
            b = self.buf(t, ptr)
            body.append(f"{var}_in[{n_}] = {b.base};")
            if any(b.offset):
                raise PlanError(f"stage op {op.index}: concatenation input not a tile")
        body += self._check(f"nnrt_concat_x8(&{var}, {var}_in, {yout.base})")
        if any(yout.offset):
            raise PlanError(f"stage op {op.index}: concatenation output not a tile")
        return pre, body


def _collapse(dims: list[int], s1: list[int], s2: list[int]
              ) -> tuple[list[int], list[int], list[int]]:
    """Merge neighbouring dimensions that both operands walk contiguously (the output is
    dense): the kernel's inner loop then runs over whole rows of pixels, or the whole
    patch, instead of one pixel's channels at a time."""
    d, a, b = [dims[0]], [s1[0]], [s2[0]]
    for n, x1, x2 in zip(dims[1:], s1[1:], s2[1:], strict=True):
        if a[-1] == x1 * n and b[-1] == x2 * n:
            d[-1] *= n
            a[-1], b[-1] = x1, x2
        else:
            d.append(n)
            a.append(x1)
            b.append(x2)
    return d, a, b


def _area(r: Region) -> int:
    return (r[1] - r[0]) * (r[3] - r[2])


def _is(op: Op, trait: str) -> bool:
    """The op's definition has the boolean trait (``transpose``, ``concat``)."""
    d = known(op)
    return d is not None and bool(getattr(d, trait))


class StageCalls:
    """The tiled stages of a plan: which ops they run and the code that runs them."""

    def __init__(self, plan: Plan, graph: Graph, facts: PlanFacts) -> None:
        self.plan = plan
        self.graph = graph
        self.facts = facts
        self.stage_of: dict[int, int] = {}
        self.last_op: dict[int, int] = {}
        for n, st in enumerate(plan.stages):
            for i in st.ops:
                self.stage_of[i] = n
            self.last_op[st.ops[-1]] = n

    def call(self, op_index: int) -> str | None:
        """None: an ordinary op; "": run inside a stage (no call of its own); else the
        stage function to call at this op (the stage's last)."""
        if op_index not in self.stage_of:
            return None
        n = self.last_op.get(op_index)
        return "" if n is None else f"stage_{n}"

    def emit(self, ctx_for: Callable[[Op], EmitContext], arena_at: Callable[[int], str],
             ptr: Callable[[int], str], dynamic: bool = False
             ) -> tuple[list[str], list[str], set[str]]:
        """(constant tables, functions, headers) of every stage."""
        if self.plan.stages and dynamic:
            raise PlanError("the dynamic allocator cannot run a plan with a tiled stage",
                            hint="plan with --tiling off for --allocator dynamic")
        decls: list[str] = []
        funcs: list[str] = []
        headers: set[str] = set()
        for n, st in enumerate(self.plan.stages):
            em = StageEmitter(st, n, self.graph, self.facts, ctx_for, arena_at)
            funcs.append("\n".join(em.emit(ptr)) + "\n")
            decls += em.decls
            headers |= em.headers
        return decls, funcs, headers
