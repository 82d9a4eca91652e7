"""The generated header as documentation: how to run the model, what each input and
output holds, and which nnrt sources the model needs.

``<name>_model.h`` gets, after its existing ``<MODEL>_ARENA_BYTES`` macros:

- a usage block (prepare -> input -> invoke -> output) with the model's own names;
- per input and output ``i``: ``<MODEL>_INPUT<i>_BYTES``, ``_DIMS`` (rank),
  ``_SHAPE`` (a brace initialiser, outermost dimension first), ``_TYPE`` (the C element
  type) and, for a per-tensor quantised tensor, ``_SCALE`` (the float the descriptor
  holds) and ``_ZERO_POINT`` (``OUTPUT`` likewise), and ``<MODEL>_INPUTS`` /
  ``<MODEL>_OUTPUTS`` (their counts);
- a comment listing the nnrt sources the generated C calls into, with the kernels those
  call in turn (paths under ``modules/nnrt/``): what a build that does not compile all
  of ``kernels/`` must compile (any build also needs a port: ``port/``).

Only the header changes: the generated .c is the same, byte for byte.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from ..cdefs import C_TYPE
from ..ir import Graph
from ..paths import nnrt_dir

_CALL = re.compile(r"\b(nnrt_[A-Za-z0-9_]+)\s*\(")
_REFERENCE = re.compile(r"\b(nnrt_[A-Za-z0-9_]+)\b")  # data too: nnrt_sigmoid_table_u16
_DEFINITION = re.compile(r"^(?!static)[A-Za-z_][\w \*]*?\b(nnrt_\w+)\s*\([^;{]*\)\s*\{", re.M)
_INSTANCE = re.compile(r"^[A-Z][A-Z0-9_]*\((nnrt_\w+)\s*,", re.M)
_INCLUDE = re.compile(r'^#include "([\w./]+\.h)"', re.M)


def scale_literal(scale: float) -> str:
    """A quantisation scale as the generated descriptors spell it (the same float)."""
    return f"{float(scale)!r}f"


def io_macros(graph: Graph, name: str) -> list[str]:
    """The per-input and per-output macros."""
    up = name.upper()
    lines = [f"#define {up}_INPUTS {len(graph.inputs)}u",
             f"#define {up}_OUTPUTS {len(graph.outputs)}u"]
    for kind, tensors in (("INPUT", graph.inputs), ("OUTPUT", graph.outputs)):
        for i, t in enumerate(tensors):
            tt = graph.tensors[t]
            p = f"{up}_{kind}{i}"
            shape = ", ".join(str(d) for d in tt.shape)
            quant = tt.quant if tt.quant is not None and len(tt.quant.scale) == 1 else None
            desc = f"{C_TYPE[tt.dtype]} [{shape}]" + (
                f", q = x / {float(quant.scale[0]):.9g} + {quant.zero_point[0]}" if quant
                else "")
            lines += ["", f"/* {kind.lower()} {i} '{_comment_safe(tt.name)}': {desc} */",
                      f"#define {p}_BYTES {tt.nbytes}u",
                      f"#define {p}_DIMS {len(tt.shape)}u",
                      f"#define {p}_SHAPE {{{shape}}}",
                      f"#define {p}_TYPE {C_TYPE[tt.dtype]}"]
            if quant is not None:
                zp = int(quant.zero_point[0])
                lines += [f"#define {p}_SCALE {scale_literal(quant.scale[0])}",
                          f"#define {p}_ZERO_POINT {zp if zp >= 0 else f'({zp})'}"]
    return lines


def usage_block(graph: Graph, name: str) -> list[str]:
    """The comment showing the calls in order, with this model's names."""
    up = name.upper()
    tin = C_TYPE[graph.tensors[graph.inputs[0]].dtype] if graph.inputs else "uint8_t"
    tout = C_TYPE[graph.tensors[graph.outputs[0]].dtype] if graph.outputs else "uint8_t"
    return [
        "/*",
        " * Usage (the API is nnrt/model.h's nnrt_model_t):",
        " *",
        f' *   #include "{name}_model.h"',
        " *",
        f" *   const nnrt_model_t *m = &{name}_model;",
        " *   if (m->prepare != NULL && m->prepare() != NNRT_OK) { ... }  // once, first",
        f" *   {tin} *in = m->input(0);            // {up}_INPUT0_BYTES bytes, "
        f"{up}_INPUT0_SHAPE",
        f" *   memcpy(in, data, {up}_INPUT0_BYTES);   // quantised: q = x / SCALE + "
        "ZERO_POINT",
        " *   if (m->invoke() != NNRT_OK) { ... }   // one inference",
        f" *   const {tout} *out = m->output(0);   // {up}_OUTPUT0_BYTES bytes, valid until "
        "the next invoke()",
        " *",
        " * input(i) / output(i) for every i below <MODEL>_INPUTS / _OUTPUTS; the arena is "
        "static",
        f" * ({up}_ARENA_BYTES bytes inside the generated .c).",
        " */",
    ]


def sources_comment(c_text: str) -> list[str]:
    """The nnrt sources the generated C needs (its calls and their callees)."""
    files = needed_sources(c_text)
    lines = ["/*", " * nnrt sources this model calls (under modules/nnrt/; or compile all "
             "of kernels/", " * and let --gc-sections drop the rest), plus one port "
             "(port/host, port/baremetal, port/zephyr):"]
    lines += [f" *   {f}" for f in files] or [" *   (none)"]
    return [*lines, " */"]


def needed_sources(c_text: str) -> list[str]:
    """Paths (relative to modules/nnrt/) of the .c files defining the nnrt functions
    ``c_text`` calls, closed over their own calls."""
    index = _function_files()
    todo = sorted(set(_CALL.findall(_with_headers(c_text))))
    seen: set[str] = set()
    while todo:
        fn = todo.pop()
        path = index.get(fn)
        if path is None or path in seen:
            continue
        seen.add(path)
        # its calls (with those of the inline bodies of its headers), and the nnrt data
        # it uses itself (a table defined in a file of its own)
        refs = set(_CALL.findall(_read(path))) | set(
            _REFERENCE.findall((nnrt_dir() / path).read_text(errors="replace")))
        todo += [f for f in refs if f in index]
    return sorted(seen)


@cache
def _function_files() -> dict[str, str]:
    """nnrt function -> the file that defines it: one public function per file, named
    after it, then the other definitions found in the files (plain, or instantiated by a
    kernel macro: ``NNRT_POOL_KERNEL(nnrt_avgpool2d_s8, ...)``)."""
    root = nnrt_dir()
    files = sorted((root / "kernels").rglob("*.c")) + sorted((root / "src").rglob("*.c"))
    out: dict[str, str] = {f.stem: f.relative_to(root).as_posix() for f in files
                           if f.stem.startswith("nnrt_")}
    for f in files:
        rel = f.relative_to(root).as_posix()
        text = (root / rel).read_text(errors="replace")
        for m in _DEFINITION.finditer(text):
            out.setdefault(m.group(1), rel)
        for m in _INSTANCE.finditer(text):
            out.setdefault(m.group(1), rel)
    return out


@cache
def _read(rel: str) -> str:
    """A source of modules/nnrt/ with the nnrt headers it includes."""
    path = nnrt_dir() / rel
    return _with_headers(path.read_text(errors="replace"), path.parent.as_posix())


def _with_headers(text: str, here: str = "") -> str:
    """``text`` followed by every nnrt header it includes, recursively (the calls of
    their inline bodies count); ``here``: the directory of the file ``text`` is."""
    return text + "".join(_header(inc, here) for inc in _INCLUDE.findall(text))


_OPEN: set[str] = set()  # headers being expanded (an include cycle ends there)


@cache
def _header(inc: str, here: str) -> str:
    root = nnrt_dir()
    for base in ((Path(here),) if here else ()) + (root / "include", root / "kernels"):
        path = (base / inc).resolve()
        if path.is_file() and str(path) not in _OPEN:
            _OPEN.add(str(path))
            try:
                return _with_headers(path.read_text(errors="replace"), path.parent.as_posix())
            finally:
                _OPEN.discard(str(path))
    return ""


def _comment_safe(text: str) -> str:
    return text.replace("*/", "* /").replace("\\", "/")
