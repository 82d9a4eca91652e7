"""C for ops in row bands whose feature maps live in storage (``Plan.bands``,
``Plan.stored``; passes.fm_bands): one function per banded op.

A banded op is a one-op stage (``codegen.stages``) whose "gather" inputs come from the
tile store instead of a full tensor in RAM -- per band, the row chunks that hold the
rows its window needs are read back and authenticated, first chunk first, into the
input's band buffer -- and whose "scatter" output goes to the store: the band's
chunks are sealed and written last chunk first (each is sealed in place, its tag
overwriting the first bytes of the next chunk, already written). The kernel calls are
the stage emitter's (geometry per band from the plan's regions).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..cdefs import C_TYPE, DType
from ..errors import PlanError
from ..ir import Graph, Op
from ..lowering import EmitContext
from ..lowering.base import RowBand
from ..lowering.call import render, render_params
from ..lowering.elementwise import BinaryLowering
from ..lowering.pool import MeanLowering, PoolLowering
from ..ops import band_of, lowering_for
from ..ops.base import REDUCE, ROWS, WINDOW, BandForm
from ..plan import ChunkEntry, Plan, StageEntry, StoredEntry
from ..planfacts import PlanFacts
from .stages import StageEmitter, _is, _table
from .views import memo_consts


def _span(lines: list[str]) -> list[str]:
    return ["    " + x for x in lines]


class BandEmitter(StageEmitter):
    """The tables and the function of one banded op."""

    def __init__(self, stage: StageEntry, graph: Graph, facts: PlanFacts,
                 ctx_for: Callable[[Op], EmitContext], arena_at: Callable[[int], str],
                 stored: dict[int, StoredEntry], store: str,
                 chunks: tuple[ChunkEntry, ...] = (), model: str = "") -> None:
        op = stage.ops[0]
        super().__init__(stage, op, graph, facts, ctx_for, arena_at)
        self.name = f"band_op{op}"
        self.stored = stored
        self.store = store
        self.chunks = chunks  # the op's streamed weight slices, every band's in turn
        self.model = model

    def _window(self, op: Op, ctx: EmitContext, ptr: Callable[[int], str]
                ) -> tuple[list[str], list[str]]:
        """The window op's call; when its weights stream (``Plan.swap`` chunks of a
        banded op: M output-channel slices, read again for every band), the call runs
        once per slice on the band: weights from the staging buffer, the bias and output
        channels of the slice, its output dense in the slice buffer and copied into its
        channels of the band (``nnrt_copy_2d_x8``)."""
        if not self.chunks:
            return super()._window(op, ctx, ptr)
        w_t = op.inputs[1]
        b_t = op.inputs[2] if len(op.inputs) > 2 and op.inputs[2] >= 0 else -1
        y = self.g.tensors[op.outputs[0]]
        if y.dtype != DType.FLOAT32 or len(self.chunks) % self.n:
            raise PlanError(f"op {op.index} ({op.opcode}): streamed weights in row bands "
                            "need float32 slices, the same for every band",
                            hint="plan the swap again (nnopt.swap.pipeline.plan_swap_for)")
        m = len(self.chunks) // self.n
        slices = self.chunks[:m]
        if any((c.c0, c.c1) != (d.c0, d.c1) for i, c in enumerate(self.chunks)
               for d in (slices[i % m],)):
            raise PlanError(f"op {op.index}: the bands stream different slices",
                            hint="plan the swap again")
        base = self.chunks[0].index
        if any(c.index != base + i for i, c in enumerate(self.chunks)):
            raise PlanError(f"op {op.index}: its weight chunks are not consecutive",
                            hint="plan the swap again")
        inner = ctx.c_ptr

        def c_ptr(t: int) -> str:
            if t == w_t:
                return "((const void *)w_chunk)"
            if t == b_t:
                return f"((const void *)((const float *){inner(t)} + c0))"
            return inner(t)

        pre, body = super()._window(op, replace(ctx, c_ptr=c_ptr), ptr)
        var = f"op{op.index}"
        yout = self.buf(op.outputs[0], ptr)
        y_at = (f"(float *)(void *)({yout.base} + st{self.idx}_op{op.index}_io[p][1])")
        call = [x for x in body if x.startswith("s = ")]
        if len(call) != 1 or y_at not in call[0] or f"(&{var}," not in call[0]:
            raise PlanError(f"op {op.index} ({op.opcode}): no kernel call to stream "
                            "weights through", hint="plan the swap again")
        slice_buf = f"{self.model}_slice"
        call_text = (call[0].replace(y_at, f"(float *)(void *){slice_buf}")
                     .replace(f"(&{var},", f"(&{var}c,"))
        oc = y.shape[-1]
        row = self.g.tensors[w_t].nbytes // self.g.tensors[w_t].shape[0]
        tab = f"bd{self.idx}_w"
        self.decls.append(_table(tab, "uint32_t", [[c.c0, c.c1 - c.c0] for c in slices], 2))
        loop = [
            f"/* its weights: {m} output-channel slices streamed for each band */",
            f"for (uint32_t j = 0; j < {m}u; ++j) {{",
            "    const uint8_t *w_chunk;",
            "    size_t w_len;",
            f"    const uint32_t c0 = {tab}[j][0];",
            f"    const uint32_t n = {tab}[j][1];",
            f"    {self.ptype(pre)} {var}c = {var};",
            "",
            f"    s = nnrt_swap_wait(&{self.model}_swap, {base}u + p * {m}u + j, &w_chunk, "
            "&w_len);",
            "    if (s != NNRT_OK) {", "        return s;", "    }",
            f"    if (w_len != n * {row}u) {{", "        return NNRT_ERR_FORMAT;", "    }",
            f"    {var}c.geom.output_c = (int32_t)n;",
            f"    {call_text}",
            "    if (s != NNRT_OK) {", "        return s;", "    }",
            f"    /* channels [c0, c0 + n) of the band's {y.shape[-1]}-channel rows */",
            f"    s = nnrt_copy_2d_x8((const uint8_t *){slice_buf}, n * 4u, (uint8_t *)"
            f"(void *)({yout.base} + st{self.idx}_op{op.index}_io[p][1]) + c0 * 4u, "
            f"{oc * 4}u, (uint32_t)({var}.geom.output_h * {var}.geom.output_w), n * 4u);",
            "    if (s != NNRT_OK) {", "        return s;", "    }",
            "}"]
        self.headers.add("nnrt/kernels/tiling.h")
        i = body.index(call[0])
        return pre, [*body[:i], *loop, *body[i + 4:]]  # the call and its check replaced

    @staticmethod
    def ptype(pre: list[str]) -> str:
        """The parameter type of the window call (its ``T var = var_base;`` line)."""
        line = pre[-1]
        return line.split(" ", 1)[0]

    def _chunks(self, t: int, name: str) -> StoredEntry:
        """Declare ``name``: per band the chunks [c0, c1) of t the band's region holds."""
        m = self.stored[t]
        rows = [[r[0] // m.chunk_rows, -(-r[1] // m.chunk_rows)] for r in self.tiles[t].regions]
        self.decls.append(_table(name, "uint32_t", rows, 2))
        return m

    def _len(self, m: StoredEntry) -> str:
        if m.last_bytes == m.chunk_bytes:
            return f"{m.chunk_bytes}u"
        return f"(c == {m.chunks - 1}u ? {m.last_bytes}u : {m.chunk_bytes}u)"

    def _gather(self, x: int, ptr: Callable[[int], str]) -> list[str]:
        name = f"bd{self.idx}_g{x}"
        m = self._chunks(x, name)
        dst = f"(uint8_t *){self.arena_at(self.tiles[x].offset)}"
        return [f"/* tensor {x}: the row chunks this band reads, from {m.device} */",
                f"for (uint32_t c = {name}[p][0]; c < {name}[p][1]; ++c) {{",
                *_span(self._check(
                    f"nnrt_fmstore_get(&{self.store}, {m.first_tile}u + c, {dst} + "
                    f"(c - {name}[p][0]) * {m.chunk_bytes}u, {self._len(m)})")),
                "}"]

    def _scatter(self, y: int, ptr: Callable[[int], str]) -> list[str]:
        name = f"bd{self.idx}_c{y}"
        m = self._chunks(y, name)
        src = f"(uint8_t *){self.arena_at(self.tiles[y].offset)}"
        return [f"/* tensor {y}: this band's row chunks sealed and written to {m.device}, "
                "last first */",
                f"for (uint32_t c = {name}[p][1]; c-- > {name}[p][0];) {{",
                *_span(self._check(
                    f"nnrt_fmstore_put(&{self.store}, {m.first_tile}u + c, {src} + "
                    f"(c - {name}[p][0]) * {m.chunk_bytes}u, {self._len(m)})")),
                "}"]

    def _kind(self, op: Op) -> str | None:
        form = band_of(self.g, op)
        return form.kind if form is not None else super()._kind(op)

    # ----- ops the stage emitter has no tile call for (unary element-wise, channel PAD)
    def emit(self, ptr: Callable[[int], str]) -> list[str]:
        op = self.g.op_by_index[self.st.ops[0]]
        form = band_of(self.g, op)
        if form is not None and form.kind == REDUCE:
            return self._reduce(op, ptr)
        if form is not None and form.kind == ROWS:
            return self._rows(op, form, ptr)
        if form is not None:
            self.whole = set(form.whole)
        kind = self._kind(op)
        if kind is not None and (kind == WINDOW or _is(op, "concat")
                                 or isinstance(lowering_for(op), BinaryLowering)):
            return super().emit(ptr)
        return self._rowwise(op, ptr)

    def _function(self, op: Op, what: str, body: list[str]) -> list[str]:
        return [f"/* op {op.index}: {op.opcode} in {self.n} row bands{what} */",
                f"static nnrt_status_t {self.name}(void)", "{", "    nnrt_status_t s;",
                f"    for (uint32_t p = 0; p < {self.n}u; ++p) {{",
                *["        " + b if b else "" for b in body], "    }", "    return NNRT_OK;", "}"]

    def _reduce(self, op: Op, ptr: Callable[[int], str]) -> list[str]:
        """A global average pool or MEAN over bands of input rows: each band's rows
        added to the per-channel partial sums (a static array of the channels), the mean
        written after the last band (``nnrt_avgpool2d_rows_*``, ``nnrt_mean_rows_*``)."""
        x, y = op.inputs[0], op.outputs[0]
        if self.tiles[x].kind != "gather":
            raise PlanError(f"op {op.index} ({op.opcode}): a reduction in row bands reads "
                            "a stored input")
        low = lowering_for(op)
        if not isinstance(low, PoolLowering | MeanLowering):
            raise PlanError(f"op {op.index} ({op.opcode}) has no row-band reduction")
        ctx = self.ctx_for(op)
        params, fn, acc_t = low.reduce_call(ctx)
        xin, yout = self.buf(x, ptr), self.buf(y, ptr)
        _, _, c, _ = self._dims(x)
        elem = C_TYPE[self.g.tensors[x].dtype]
        rows = [[r[0], r[1] - r[0]] for r in xin.regions]
        tab, acc, var = f"bd{self.idx}_rows", f"bd{self.idx}_acc", f"op{op.index}"
        self.decls += [_table(tab, "int32_t", rows, 2),
                       f"/* op {op.index}: the per-channel partial sums, band to band */",
                       f"static {acc_t} {acc}[{c}];"]
        self.headers.add("nnrt/kernels/pool.h")
        body = [*self._gather(x, ptr), f"/* op {op.index}: this band's rows into the sums */",
                *self._check(f"{fn}(&{var}, (const {elem} *)(const void *){xin.base}, "
                             f"{tab}[p][0], {tab}[p][1], {acc}, "
                             f"({elem} *)(void *){yout.base})")]
        lines = self._function(op, " (partial sums)", body)
        return [*lines[:4], *["    " + x for x in render_params(params, f"{var}")],
                *lines[4:]]

    def _rows(self, op: Op, form: BandForm, ptr: Callable[[int], str]) -> list[str]:
        """An op whose output rows read a computable input row range (a resize, a
        transposed convolution): per band its lowering's band call (``emit_band``) on
        band-shaped tensors, the input band starting at the first row it reads."""
        x, y = form.inputs[0], op.outputs[0]
        low = lowering_for(op)
        emit_band = getattr(low, "emit_band", None)
        if emit_band is None:
            raise PlanError(f"op {op.index} ({op.opcode}) cannot run in row bands")
        xin, yout = self.buf(x, ptr), self.buf(y, ptr)
        _, _, cx, ex = self._dims(x)
        ctx = memo_consts(self.ctx_for(op))
        self.headers.update(low.headers)
        tx, ty = self.g.tensors[x], self.g.tensors[y]
        body: list[str] = []
        if self.tiles[x].kind == "gather":
            body += self._gather(x, ptr)
        body += [f"/* op {op.index}: {op.opcode} on this band */", "switch (p) {"]
        for p in range(self.n):
            a, b = self.tiles[y].regions[p][:2]
            lo, hi = form.rows.span(a, b)
            t = xin.regions[p]
            if lo < t[0] or hi > t[1]:
                raise PlanError(f"op {op.index}: band {p} reads outside its input rows")
            x_off = xin.offset[p] + (lo - t[0]) * xin.row_pixels[p] * cx * ex
            c2 = _band_context(ctx, op, x, hi - lo, b - a, f"((void *)({xin.base} + {x_off}u))",
                               f"((void *)({yout.base} + {yout.offset[p]}u))")
            band = RowBand(p, tx.shape[1], ty.shape[1], (lo, hi), (a, b))
            body += [f"case {p}u: {{", *_span(render(emit_band(c2, band), c2.pointers,
                                                    assign="s")), "    break;", "}"]
        body += ["default:", "    return NNRT_ERR_ARG;", "}",
                 "if (s != NNRT_OK) {", "    return s;", "}"]
        if self.tiles[y].kind == "scatter":
            body += self._scatter(y, ptr)
        return self._function(op, "", body)

    def _rowwise(self, op: Op, ptr: Callable[[int], str]) -> list[str]:
        """An op whose output rows read the same rows of its one activation input: its
        registered lowering on band-shaped tensors (one call per band height)."""
        acts = list(dict.fromkeys(self.g.activations(op)))
        if len(acts) != 1 or len(op.outputs) != 1:
            raise PlanError(f"op {op.index} ({op.opcode}) cannot run in row bands")
        x, y = acts[0], op.outputs[0]
        xin, yout = self.buf(x, ptr), self.buf(y, ptr)
        _, _, cx, ex = self._dims(x)
        io = f"bd{self.idx}_op{op.index}_io"
        rows = []
        for p in range(self.n):
            a, b = self.tiles[y].regions[p][:2]
            t = xin.regions[p]
            rows.append([xin.offset[p] + (a - t[0]) * xin.row_pixels[p] * cx * ex,
                         yout.offset[p], b - a])
        self.decls.append(_table(io, "uint32_t", rows, 3))
        ctx = memo_consts(self.ctx_for(op))
        low = lowering_for(op)
        self.headers.update(low.headers)

        def call(h: int) -> list[str]:
            c2 = _band_context(ctx, op, x, h, h, f"((void *)({xin.base} + {io}[p][0]))",
                               f"((void *)({yout.base} + {io}[p][1]))")
            return render(low.emit(c2), c2.pointers, assign="s")

        heights = sorted({r[2] for r in rows}, reverse=True)
        body: list[str] = []
        if x in self.tiles and self.tiles[x].kind == "gather":
            body += self._gather(x, ptr)
        body.append(f"/* op {op.index}: {op.opcode} on this band */")
        for k, h in enumerate(heights):
            cond = ("if" if k == 0 else "} else if") + f" ({io}[p][2] == {h}u) {{"
            body += [cond, *_span(call(h))] if len(heights) > 1 else ["{", *_span(call(h))]
        body += ["}", "if (s != NNRT_OK) {", "    return s;", "}"]
        if self.tiles[y].kind == "scatter":
            body += self._scatter(y, ptr)
        return [f"/* op {op.index}: {op.opcode} in {self.n} row bands */",
                f"static nnrt_status_t {self.name}(void)", "{", "    nnrt_status_t s;",
                f"    for (uint32_t p = 0; p < {self.n}u; ++p) {{",
                *["        " + b if b else "" for b in body], "    }", "    return NNRT_OK;", "}"]


def _band_context(ctx: EmitContext, op: Op, x: int, x_rows: int, y_rows: int, x_at: str,
                  y_at: str) -> EmitContext:
    """The op's emitting context on one band: its activation input x and its output
    replaced by tensors of ``x_rows`` and ``y_rows`` rows at the C addresses ``x_at``
    and ``y_at``."""
    g = ctx.graph
    y = op.outputs[0]
    n0 = len(g.tensors)
    tx, ty = g.tensors[x], g.tensors[y]
    x2 = replace(tx, index=n0, shape=(1, x_rows, *tx.shape[2:]), name=f"{tx.name}[band]")
    y2 = replace(ty, index=n0 + 1, shape=(1, y_rows, *ty.shape[2:]), name=f"{ty.name}[band]")
    g2 = replace(g, tensors=(*g.tensors, x2, y2))
    op2 = replace(op, inputs=tuple(n0 if t == x else t for t in op.inputs), outputs=(n0 + 1,))

    def ptr2(t: int) -> str:
        return x_at if t == n0 else y_at if t == n0 + 1 else ctx.c_ptr(t)

    return replace(ctx, graph=g2, op=op2, c_ptr=ptr2, decl=None)


class BandCalls:
    """The banded ops of a plan, the whole puts and gets of its stored feature maps."""

    def __init__(self, plan: Plan, graph: Graph, facts: PlanFacts, store: str) -> None:
        self.plan = plan
        self.graph = graph
        self.facts = facts
        self.store = store
        self.stored = {m.tensor: m for m in plan.stored}
        self.banded = {st.ops[0]: st for st in plan.bands}

    def call(self, op_index: int) -> str | None:
        """The function running the op in bands, or None."""
        return f"band_op{op_index}" if op_index in self.banded else None

    def segment(self, t: int, pos: int) -> int | None:
        """Arena offset of stored tensor t where it is whole at schedule position pos."""
        m = self.stored.get(t)
        if m is None:
            return None
        for p, off in (*m.put_after, *m.get_before):
            if p == pos:
                return off
        return None

    def in_storage(self, t: int, pos: int) -> bool:
        """Tensor t is stored and not whole in RAM at pos (nothing to trace there)."""
        return t in self.stored and self.segment(t, pos) is None

    def whole(self, pos: int, when: str, arena: str) -> list[str]:
        """Reads (``before``) or writes (``after``) of whole stored tensors at pos."""
        out: list[str] = []
        for m in self.plan.stored:
            for p, off in (m.get_before if when == "before" else m.put_after):
                if p != pos:
                    continue
                ln = (f"(c == {m.chunks - 1}u ? {m.last_bytes}u : {m.chunk_bytes}u)"
                      if m.last_bytes != m.chunk_bytes else f"{m.chunk_bytes}u")
                call = (f"nnrt_fmstore_{'get' if when == 'before' else 'put'}(&{self.store}, "
                        f"{m.first_tile}u + c, {arena} + {off}u + c * {m.chunk_bytes}u, {ln})")
                loop = (f"for (uint32_t c = 0; c < {m.chunks}u; ++c) {{" if when == "before"
                        else f"for (uint32_t c = {m.chunks}u; c-- > 0u;) {{")
                out += [f"    /* tensor {m.tensor}: {m.chunks} row chunks "
                        f"{'read back from' if when == 'before' else 'sealed and written to'} "
                        f"{m.device} */", "    " + loop, f"        s = {call};",
                        "        if (s != NNRT_OK) {", "            return s;", "        }",
                        "    }"]
        return out

    def emit(self, ctx_for: Callable[[Op], EmitContext], arena_at: Callable[[int], str],
             ptr: Callable[[int], str]) -> tuple[list[str], list[str], set[str]]:
        """(constant tables, functions, headers) of every banded op."""
        decls: list[str] = []
        funcs: list[str] = []
        headers: set[str] = set()

        def whole_ptr(t: int) -> str:
            # the lowerings also emit the op whole (to declare its specialised core, the
            # text discarded): a stored tensor has no whole address, none is used
            return "((void *)0)" if t in self.stored else ptr(t)

        def ctx_band(op: Op) -> EmitContext:
            return replace(ctx_for(op), c_ptr=whole_ptr)

        swap = self.plan.swap
        for st in self.plan.bands:
            chunks = tuple(c for c in swap.chunks if c.op == st.ops[0]) if swap else ()
            em = BandEmitter(st, self.graph, self.facts, ctx_band, arena_at, self.stored,
                             self.store, chunks, self.store.removesuffix("_fm"))
            funcs.append("\n".join(em.emit(whole_ptr)) + "\n")
            decls += em.decls
            headers |= em.headers
        return decls, funcs, headers
