"""The operator registry (nnopt.ops): one definition per operator, passes ask traits.

The acceptance measure of the redesign: an opcode's name is a string literal in at most
two compiler modules (its definition in ``nnopt/ops/`` and its lowering), three for the
few a technique is about; the median over supported ops at most two.
"""

from __future__ import annotations

import ast
import io
import re
import statistics
import tokenize
from pathlib import Path

import pytest

from nnopt.frontend.tflite import load_model
from nnopt.ops import DEFINITIONS, SUPPORTED_OPS, definition, known, lowering_for
from nnopt.passes.regions import spatial_of

PACKAGE = Path(__file__).resolve().parents[1] / "scripts" / "nnopt"

# Opcodes allowed in a third module, and why.
EXCEPTIONS = {
    "MAX_POOL_2D": "passes/fuse.py: max-pool fusion is about that operator",
    "RELU": "arith.py: also the name of a TFLite fused activation",
    "RELU6": "arith.py: also the name of a TFLite fused activation",
    "TANH": "arith.py: also the name of a TFLite fused activation",
}


# Format translators, not compiler passes: they name the IR opcodes they read from or
# write to another format (the ONNX importer builds IR ops; nnopt convert's TFLite writer
# maps each opcode to its options table). Not counted here; moving both behind the
# definitions (an OpDef that also writes its options, IR-op constructors the ONNX
# handlers call) is the next step of the redesign.
TRANSLATORS = ("frontend/onnx/", "tflite_builder.py")
# Test-model builders (nnopt.testing: the out-of-core models tests, samples and benchmarks
# build) name opcodes as a model's author does, in the graphs they write; not the
# compiler's knowledge of an operator either, and not counted.
MODEL_BUILDERS = ("testing/",)


def _string_literals(path: Path) -> set[str]:
    """The values of the plain string literals in a module (not comments)."""
    out: set[str] = set()
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text()).readline)
    for tok in tokens:
        if tok.type == tokenize.STRING and not tok.string.lstrip("rbuRBU").startswith(
                ("f", "F")):
            try:
                value = ast.literal_eval(tok.string)
            except (ValueError, SyntaxError):
                continue
            if isinstance(value, str):
                out.add(value)
    return out


def opcode_modules(translators: bool = False) -> dict[str, list[str]]:
    """{opcode: modules naming it}: the compiler's modules, or (``translators``) only the
    format translators'."""
    literals = {str(p.relative_to(PACKAGE)): _string_literals(p)
                for p in sorted(PACKAGE.rglob("*.py"))}
    literals = {m: lits for m, lits in literals.items()
                if m.startswith(TRANSLATORS) == translators and not m.startswith(MODEL_BUILDERS)}
    return {op: [m for m, lits in literals.items() if op in lits] for op in SUPPORTED_OPS}


def test_opcode_names_live_in_at_most_two_modules() -> None:
    counts = opcode_modules()
    too_many = {op: mods for op, mods in counts.items()
                if len(mods) > (3 if op in EXCEPTIONS else 2)}
    assert not too_many, f"opcodes named in too many modules: {too_many}"
    assert statistics.median(len(m) for m in counts.values()) <= 2
    for op, mods in counts.items():
        assert any(m.startswith("ops/") for m in mods), f"{op} has no definition module"


def test_the_count_sees_string_literals_not_comments(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text('# "CONV_2D" in a comment\nx = "MAX_POOL_2D"\ny = f"{x}CONV_2D"\n')
    assert _string_literals(src) & SUPPORTED_OPS == {"MAX_POOL_2D"}


def test_every_definition_has_its_lowering() -> None:
    for code, d in DEFINITIONS.items():
        assert d.opcode == code
        module = type(d.lowering).__module__
        assert module.startswith("nnopt.lowering."), (code, module)
        assert (PACKAGE / "lowering" / f"{module.rsplit('.', 1)[1]}.py").is_file(), code
        assert lowering_for(_op(code)) is d.lowering


def _kernel_headers() -> str:
    return "\n".join(p.read_text() for p in sorted(
        (PACKAGE.parents[1] / "modules" / "nnrt" / "include" / "nnrt" / "kernels").glob("*.h")))


def test_every_exported_kernel_check_is_run_by_prepare() -> None:
    """Each ``nnrt_*_check()`` a kernel header exports is some lowering's check (the
    generated prepare() runs it for the ops calling its kernels), declared in the header
    the check names, and each kernel it checks is declared too."""
    headers = _kernel_headers()
    exported = set(re.findall(r"nnrt_status_t\s+(nnrt_\w+_check)\(", headers))
    checks = {c for d in DEFINITIONS.values() for c in d.lowering.checks}
    assert exported == {c.check for c in checks}
    root = PACKAGE.parents[1] / "modules" / "nnrt" / "include"
    for c in checks:
        text = (root / c.header).read_text()
        assert re.search(rf"\b{c.check}\(", text), (c.check, c.header)
        for k in c.kernels:
            assert re.search(rf"nnrt_status_t\s+{k}\(", headers), (c.check, k)


def test_every_kernel_check_has_its_own_file() -> None:
    """One kind of place for a kernel's argument check (docs/ARCHITECTURE.md, issue 43):
    each exported ``nnrt_*_check()`` is declared (not defined) in its family header and
    defined alone in ``modules/nnrt/kernels/<family>/<name>.c``, in no other file."""
    nnrt = PACKAGE.parents[1] / "modules" / "nnrt"
    headers = _kernel_headers()
    assert not re.findall(r"static\s+inline\s+nnrt_status_t\s+(nnrt_\w+_check)\(", headers)
    exported = set(re.findall(r"nnrt_status_t\s+(nnrt_\w+_check)\(", headers))
    defined: dict[str, list[str]] = {}
    for src in sorted((nnrt / "kernels").rglob("*.c")):
        for name in re.findall(r"^nnrt_status_t\s+(nnrt_\w+_check)\(", src.read_text(), re.M):
            defined.setdefault(name, []).append(src.relative_to(nnrt).as_posix())
    for name in sorted(exported):
        files = defined.get(name, [])
        assert len(files) == 1 and files[0].endswith(f"/{name}.c"), (name, files)
        assert files[0].count("/") == 2, files  # kernels/<family>/<name>.c
    assert set(defined) == exported, set(defined) ^ exported


def _op(code: str):  # type: ignore[no-untyped-def]
    from nnopt.ir import Op
    return Op(0, code, (), ())


def test_unknown_opcode_is_a_typed_error() -> None:
    from nnopt.errors import UnsupportedError
    with pytest.raises(UnsupportedError, match="LSH_PROJECTION"):
        definition("LSH_PROJECTION")
    assert known(_op("LSH_PROJECTION")) is None


def test_traits_drive_the_spatial_pattern(shipped_vww: Path) -> None:
    g = load_model(shipped_vww)
    windows = [op for op in g.ops if definition(op).window is not None]
    assert windows
    for op in windows:
        sp = spatial_of(g, op)
        assert sp is not None and sp.kind == "window"
    for op in g.ops:
        if definition(op).alias:
            assert spatial_of(g, op) is None


@pytest.fixture
def shipped_vww() -> Path:
    return PACKAGE.parents[1] / "models" / "vww_96_int8.tflite"


def test_the_family_map_names_every_place_once() -> None:
    """Every family's places exist; every definition, lowering module and kernel
    directory belongs to exactly one family (the one name that finds all four)."""
    from nnopt.ops import _FAMILIES
    from nnopt.ops.families import FAMILIES, SHARED_HEADERS, SHARED_KERNEL_DIRS
    root = PACKAGE.parents[1]
    for fam in FAMILIES.values():
        for path in fam.paths():
            assert (root / path).exists(), (fam.name, path)
    owner = {type(d.lowering).__module__.rsplit(".", 1)[1]: f.__name__.rsplit(".", 1)[1]
             for f in _FAMILIES for d in f.DEFINITIONS}
    for module, fam in owner.items():
        assert module in FAMILIES[fam].lowerings, (module, fam)
    lowerings = [m for f in FAMILIES.values() for m in f.lowerings]
    assert len(lowerings) == len(set(lowerings))
    toolkit = {"__init__", "base", "call", "common"}  # shared by every family
    own = {p.stem for p in (PACKAGE / "lowering").glob("*.py")} - toolkit
    assert set(lowerings) == own
    kernels = [k for f in FAMILIES.values() for k in f.kernels]
    dirs = {p.name for p in (root / "modules" / "nnrt" / "kernels").iterdir() if p.is_dir()}
    assert sorted(kernels) == sorted(dirs - set(SHARED_KERNEL_DIRS))
    headers = {h for f in FAMILIES.values() for h in f.headers}
    public = {p.name for p in (root / "modules/nnrt/include/nnrt/kernels").glob("*.h")}
    assert headers | set(SHARED_HEADERS) == public


def _tested_opcodes(test_file: Path) -> set[str]:
    """The opcodes a test file names as string literals (the ops it builds)."""
    return _string_literals(test_file) & SUPPORTED_OPS


def test_every_op_is_tested_in_its_family_file() -> None:
    """Each family's tests are tests/ops/test_<family>.py (first) and
    tests/ops/test_<family>_<aspect>.py, and each of its ops is built by one of them;
    every file of tests/ops/ is some family's."""
    from nnopt.ops import _FAMILIES
    from nnopt.ops.families import FAMILIES
    tests = PACKAGE.parents[1] / "tests"
    for f in _FAMILIES:
        fam = FAMILIES[f.__name__.rsplit(".", 1)[1]]
        assert fam.tests[0] == f"ops/test_{fam.name}.py", fam.name
        for t in fam.tests:
            assert re.fullmatch(rf"ops/test_{fam.name}(_\w+)?\.py", t), (fam.name, t)
        named = set().union(*(_tested_opcodes(tests / t) for t in fam.tests))
        untested = {d.opcode for d in f.DEFINITIONS} - named
        assert not untested, f"{fam.name}: no test in {fam.tests} builds {sorted(untested)}"
    in_ops = {str(p.relative_to(tests)) for p in (tests / "ops").glob("test_*.py")}
    assert in_ops == {t for fam in FAMILIES.values() for t in fam.tests}


def _test_imports(source: str) -> list[str]:
    """The test modules (``test_*``, at any package depth) a module's source imports."""
    out = []
    for node in ast.walk(ast.parse(source)):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                 [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        out += [n for n in names if n.rsplit(".", 1)[-1].startswith("test_")]
    return out


def test_no_test_module_imports_another() -> None:
    """Shared helpers live in tests/support/ (a package) and fixtures in conftest.py: no
    test module imports another test module."""
    tests = PACKAGE.parents[1] / "tests"
    bad = {str(p.relative_to(tests)): found for p in sorted(tests.rglob("test_*.py"))
           if (found := _test_imports(p.read_text()))}
    assert not bad


def test_the_import_check_sees_test_imports() -> None:
    src = ("import test_x\nfrom ops.test_y import z\nfrom support.cases import q\n"
           "def f() -> None:\n    import test_w\n")
    assert _test_imports(src) == ["test_x", "ops.test_y", "test_w"]
