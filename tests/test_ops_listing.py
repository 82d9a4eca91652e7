"""``nnopt ops``: the listing is the registry joined with what the lowerings accept.

Every listed operator has a definition and a lowering; and for the operator kinds a
generic single-op model can probe (unary and binary element-wise ops, reductions over
constant axes, the quantisation converters), the listed element types are exactly those
the lowering's check() accepts among int8, uint8, int16, int32, int64 and float32 (and bool)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from nnopt import cli
from nnopt.errors import UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ir import ReducerOptions
from nnopt.oplist import supported_operators
from nnopt.ops import DEFINITIONS, check_graph, registered_opcodes
from support.tflite_builder import ModelBuilder

PROBE_DTYPES = ("int8", "uint8", "int16", "int32", "uint32", "int64", "float32", "float64",
                "bool")
QUANTISED = ("int8", "uint8", "int16", "int32")  # probe tensors with a scale
SHAPE = (1, 3, 4, 5)
OPS = {o.opcode: o for o in supported_operators()}


def _tensor(b: ModelBuilder, dtype: str) -> int:
    if dtype in QUANTISED:
        zp = 128 if dtype == "uint8" else 0
        return b.tensor(SHAPE, dtype, scale=0.05, zero_point=zp)
    return b.tensor(SHAPE, dtype)


def _accepts(build: Any) -> bool:
    b = ModelBuilder("probe")
    ins, outs = build(b)
    try:
        check_graph(load_model_bytes(b.build(ins, outs)))
    except UnsupportedError:
        return False
    return True


def _unary(opcode: str, din: str, dout: str) -> bool:
    """Accepted with the probe's quantisation, or (int16 output) with the fixed output
    scale 2^-15 that int16 LOGISTIC and TANH require."""
    def build(fixed_out: bool) -> Any:
        def b_(b: ModelBuilder) -> tuple[list[int], list[int]]:
            x = _tensor(b, din)
            y = b.tensor(SHAPE, dout, scale=2**-15) if fixed_out else _tensor(b, dout)
            b.op(opcode, [x], [y])
            return [x], [y]
        return b_
    return _accepts(build(False)) or (dout == "int16" and _accepts(build(True)))


def _binary(opcode: str, dtype: str) -> bool:
    """Accepted with an output of the inputs' dtype, or a bool one (comparisons), or as a
    selection by a bool condition between two inputs (SELECT_V2)."""
    def build(out: str) -> Any:
        def b_(b: ModelBuilder) -> tuple[list[int], list[int]]:
            x1, x2, y = _tensor(b, dtype), _tensor(b, dtype), _tensor(b, out)
            b.op(opcode, [x1, x2], [y])
            return [x1, x2], [y]
        return b_
    def select(b: ModelBuilder) -> tuple[list[int], list[int]]:  # cond ? x : y
        c, x1, x2, y = b.tensor(SHAPE, "bool"), _tensor(b, dtype), _tensor(b, dtype), \
            _tensor(b, dtype)
        b.op(opcode, [c, x1, x2], [y])
        return [c, x1, x2], [y]
    return _accepts(build(dtype)) or _accepts(build("bool")) or _accepts(select)


def _reduce(opcode: str, dtype: str, out: str) -> bool:
    """Accepted as a reduction of axis 2 (keep_dims off) or an arg-reduction along it."""
    def build(options: Any) -> Any:
        def b_(b: ModelBuilder) -> tuple[list[int], list[int]]:
            x = _tensor(b, dtype)
            q: dict[str, Any] = ({"scale": 0.05, "zero_point": 128 if out == "uint8" else 0}
                                 if out in QUANTISED and out == dtype else {})
            y = b.tensor((1, 3, 5), out, **q)
            b.op(opcode, [x, b.const(np.asarray([2], dtype=np.int32))], [y], options)
            return [x], [y]
        return b_
    try:
        return _accepts(build(ReducerOptions()))
    except ValueError:  # no reducer options table: an arg-reduction
        return _accepts(build(None))


def _probe(opcode: str) -> set[str] | None:
    """The dtypes the lowering accepts, probed; None for a kind not probed here."""
    d = DEFINITIONS[opcode]
    pairs = any("->" in t for t in OPS[opcode].dtypes)
    if d.elementwise == "unary" and pairs:
        return {f"{a}->{b}" for a in PROBE_DTYPES for b in PROBE_DTYPES
                if a != b and _unary(opcode, a, b)} | \
            {f"{a}->{a}" for a in PROBE_DTYPES if _unary(opcode, a, a)}
    if d.elementwise == "unary":
        return {t for t in PROBE_DTYPES if _unary(opcode, t, t)}
    if d.elementwise == "binary":
        return {t for t in PROBE_DTYPES if _binary(opcode, t)}
    if d.cost == "reduce_taps" and pairs:
        return {f"{a}->{b}" for a in PROBE_DTYPES for b in PROBE_DTYPES
                if _reduce(opcode, a, b)}
    if d.cost == "reduce_taps":
        return {t for t in PROBE_DTYPES if _reduce(opcode, t, t)}
    return None


def test_every_listed_operator_has_a_definition_a_lowering_and_dtypes() -> None:
    assert set(OPS) == set(DEFINITIONS) & set(registered_opcodes())
    assert set(OPS) == set(DEFINITIONS), "a definition without a lowering"
    missing = [code for code, o in OPS.items() if not o.dtypes]
    assert not missing, f"lowerings that declare no dtypes: {missing}"


def _probed_kind(opcode: str) -> bool:
    d = DEFINITIONS[opcode]
    return d.elementwise is not None or d.cost == "reduce_taps"


@pytest.mark.parametrize("opcode", sorted(o for o in OPS if _probed_kind(o)))
def test_listed_dtypes_are_what_the_lowering_accepts(opcode: str) -> None:
    probed = _probe(opcode)
    assert probed is not None
    listed = set(OPS[opcode].dtypes)
    if any("->" in t for t in listed):
        listed = {t if "->" in t else f"{t}->{t}" for t in listed}
    assert probed == listed


def test_cli_lists_every_operator_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["ops", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["count"] == len(OPS) == len(data["operators"])
    got = {o["opcode"]: o for o in data["operators"]}
    assert got["PRELU"]["dtypes"] == ["int8", "float32"]
    assert got["PRELU"]["elementwise"] == "binary"
    assert got["REDUCE_MAX"]["blob"] is False


def test_cli_table_names_the_count(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["ops"]) == 0
    out = capsys.readouterr().out
    assert f"{len(OPS)} operators" in out
    assert any(line.split()[:1] == ["ELU"] and "int8" in line for line in out.splitlines())


def test_docs_state_the_listed_operator_count() -> None:
    """docs/models.md's operator count is the one `nnopt ops` prints (and every op it
    lists is one nnopt supports): adding an operator without updating it fails here."""
    readme = (Path(__file__).resolve().parents[1] / "docs" / "models.md").read_text()
    m = re.search(r"\*\*(\d+) builtins; TFLM registers (\d+)\*\*", readme)
    assert m, "docs/models.md no longer states the operator count as '**N builtins; TFLM ...'"
    ops = supported_operators()
    n = sum(not o.custom for o in ops)
    assert int(m.group(1)) == n, f"docs/models.md says {m.group(1)} builtins, nnopt ops lists {n}"
    assert f"Every one of the {n} is also a TFLM builtin" in readme
    custom = sorted(o.opcode for o in ops if o.custom)
    c = re.search(r"\*\*(\d+) custom operators?\*\*", readme)
    assert c, "docs/models.md no longer states the custom operator count as '**N custom ...'"
    assert int(c.group(1)) == len(custom), \
        f"docs/models.md says {c.group(1)} custom operators, nnopt ops lists {custom}"
    assert all(code in readme for code in custom)


def test_custom_operators_are_listed_by_their_custom_code() -> None:
    """A custom op is listed (and loaded) by the custom code TFLM's resolver registers,
    marked custom in the JSON; every other listed op is a TFLite builtin."""
    import tflite

    for o in supported_operators():
        assert o.custom == (not hasattr(tflite.BuiltinOperator, o.opcode)), o.opcode
    assert OPS["TFLite_Detection_PostProcess"].custom
    assert OPS["TFLite_Detection_PostProcess"].to_json()["custom"] is True


def test_listing_does_not_call_n_ary_ops_binary(capsys: pytest.CaptureFixture[str]) -> None:
    """ADD_N adds n inputs and SELECT_V2 picks from three: the listing says "several
    inputs", never "binary" (the JSON keeps the registry's trait)."""
    from nnopt.cli import main

    assert main(["ops"]) == 0
    rows = {ln.split()[0]: ln for ln in capsys.readouterr().out.splitlines() if ln.strip()}
    assert "element-wise (several inputs, in place)" in rows["ADD_N"]
    assert "element-wise (one input, in place)" in rows["ABS"]
    assert not any("binary" in r for r in rows.values())


# ----- the element-type table against TFLM's kernels (docs/operators.md) -----

def test_operators_page_is_the_generated_table() -> None:
    from nnopt.oplist import dtype_table_markdown

    page = (Path(__file__).resolve().parents[1] / "docs" / "operators.md").read_text(
        encoding="utf-8")
    table = dtype_table_markdown()
    assert page.endswith(table), "docs/operators.md is stale: regenerate its table with " \
        "`nnopt ops --markdown`"


def test_every_type_tflm_takes_is_supported_or_refused_with_a_reason() -> None:
    """The audit (OpDef.tflm) covers every definition, and every type TFLM's
    kernel takes is accepted by the lowering or refused with a reason; no refusal is
    stale (a type that is refused but accepted)."""
    from nnopt.oplist import input_types
    from nnopt.ops.base import ANY

    for code, d in DEFINITIONS.items():
        k = d.tflm
        assert k is not None, f"{code}: no TFLM audit (OpDef.tflm)"
        ours = set(input_types(code))
        if k.dtypes == (ANY,):
            assert ours and not k.refused, code
            continue
        for t in k.dtypes:
            assert t in ours or k.refused.get(t), f"{code}: TFLM takes {t}; nnopt neither " \
                "accepts it nor says why not"
        for t, why in k.refused.items():
            assert t not in ours and t in k.dtypes and len(why) > 20, (code, t)
        assert (k.source is None) == (not k.dtypes), code


@pytest.mark.parametrize(("opcode", "dtype"), [("RELU", "int16"), ("GATHER", "int32"),
                                               ("FILL", "int64"), ("SIN", "int8")])
def test_types_tflm_lacks_are_refused(opcode: str, dtype: str) -> None:
    """Follow TFLM, not LiteRT: types LiteRT takes and TFLM's kernel does not stay
    refused (RELU has no int16 kernel, GATHER no int32 params, FILL no int64 value, the
    math ops are float32 only)."""
    tflm = DEFINITIONS[opcode].tflm
    assert tflm is not None and dtype not in tflm.dtypes
    assert dtype not in OPS[opcode].dtypes and not any(
        d.startswith(dtype + "->") for d in OPS[opcode].dtypes)


def test_ops_markdown_cli(capsys: pytest.CaptureFixture[str]) -> None:
    from nnopt.oplist import dtype_table_markdown

    assert cli.main(["ops", "--markdown"]) == 0
    assert capsys.readouterr().out == dtype_table_markdown()
