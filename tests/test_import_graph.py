"""The nnopt package has no import cycles, counting function-level imports too.

The graph is built from the sources with ``ast``: every ``import`` and ``from ... import``
anywhere in a module (module level, inside functions, under ``if TYPE_CHECKING``),
relative imports resolved against the module's package. ``from pkg import name`` is an
edge to ``pkg.name`` when that is a module of nnopt, else to ``pkg``. An edge goes to the
module named only (not to its parent packages), as import-linter/grimp count them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE_DIR = REPO / "scripts" / "nnopt"

#: Cycles still in the tree, each as the sorted tuple of its modules: none (the codegen
#: stages <-> views cycle went with the operator redesign). An entry here must be a real
#: cycle (test_known_cycles_are_still_there) and come with the issue that removes it.
KNOWN_CYCLES: frozenset[tuple[str, ...]] = frozenset()


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE_DIR.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE_DIR.rglob("*.py"))}


def _imports(tree: ast.AST, name: str, is_package: bool,
             known: dict[str, Path]) -> Iterator[tuple[str, bool]]:
    """(imported nnopt module, at function level?) for every import in ``tree``."""
    package = name if is_package else name.rpartition(".")[0]

    def visit(node: ast.AST, in_function: bool) -> Iterator[tuple[str, bool]]:
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name == "nnopt" or alias.name.startswith("nnopt."):
                        yield alias.name, nested
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[:len(base) - (child.level - 1)]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                if not (target == "nnopt" or target.startswith("nnopt.")):
                    continue
                for alias in child.names:
                    sub = f"{target}.{alias.name}"
                    yield (sub if sub in known else target), nested
            yield from visit(child, nested)

    yield from visit(tree, False)


def import_graph() -> tuple[dict[str, set[str]], list[str]]:
    """{module: modules it imports} and the function-level imports of nnopt modules, as
    "module: imported" (one per imported module)."""
    known = modules()
    graph: dict[str, set[str]] = {m: set() for m in known}
    function_level: list[str] = []
    for name, path in known.items():
        tree = ast.parse(path.read_text(), str(path))
        for target, nested in _imports(tree, name, path.name == "__init__.py", known):
            assert target in known, f"{name} imports {target}, which is not a module"
            if target != name:
                graph[name].add(target)
            if nested:
                function_level.append(f"{name}: {target}")
    return graph, function_level


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each
    sorted, plus a module importing itself."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return sorted(out)


def one_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """A concrete cycle through the first module of a component, for the message."""
    members = set(component)
    start = component[0]
    path = [start]
    seen = {start}

    def walk(v: str) -> bool:
        for w in sorted(graph[v] & members):
            if w == start:
                return True
            if w not in seen:
                seen.add(w)
                path.append(w)
                if walk(w):
                    return True
                path.pop()
        return False

    walk(start)
    return [*path, start]


def test_graph_sees_module_and_function_level_imports() -> None:
    graph, function_level = import_graph()
    # module-level, relative: nnopt.cli imports nnopt.errors
    assert "nnopt.errors" in graph["nnopt.cli"]
    # `from . import x` resolves to the submodule
    assert "nnopt.commands.optimize" in graph["nnopt.cli"]
    # `from . import name` in a package's module: the package (swap/__init__.py)
    assert "nnopt.swap" in graph["nnopt.swap.codegen"]
    # an import inside a function is an edge too, and counted (a planted module: the
    # tree itself keeps function-level imports rare)
    tree = ast.parse("def f() -> None:\n    from .codegen import stages\n")
    planted = list(_imports(tree, "nnopt.planted", False, modules()))
    assert planted == [("nnopt.codegen.stages", True)]
    assert all(f.split(": ")[1] in graph[f.split(": ")[0]] for f in function_level)


def test_cycle_detection_finds_a_planted_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert one_cycle(graph, ["a", "b", "c"]) == ["a", "b", "c", "a"]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_nnopt_imports_are_acyclic() -> None:
    graph, _ = import_graph()
    found = [c for c in cycles(graph) if tuple(c) not in KNOWN_CYCLES]
    message = "\n".join(" -> ".join(one_cycle(graph, c)) for c in found)
    assert not found, f"import cycles in scripts/nnopt:\n{message}"


def test_known_cycles_are_still_there() -> None:
    """An exception that no longer applies is removed, not kept."""
    graph, _ = import_graph()
    present = {tuple(c) for c in cycles(graph)}
    assert present >= KNOWN_CYCLES, f"no longer a cycle: {sorted(KNOWN_CYCLES - present)}"


#: The packages that read what the planner decided (``nnopt.planfacts``) and ask no
#: pass anything (issue 25, "plan facts flow forward").
FACT_READERS = ("nnopt.codegen", "nnopt.blob")


def pass_imports(graph: dict[str, set[str]]) -> list[str]:
    """"module: imported pass module" for every module of FACT_READERS that imports
    ``nnopt.passes`` (the package or one of its modules)."""
    return sorted(f"{m}: {t}" for m, targets in graph.items()
                  if m.startswith(FACT_READERS) for t in targets
                  if t == "nnopt.passes" or t.startswith("nnopt.passes."))


def test_codegen_and_blob_writer_import_no_pass() -> None:
    graph, _ = import_graph()
    assert any(m.startswith("nnopt.codegen.") for m in graph)  # the readers are there
    assert any(m.startswith("nnopt.blob.") for m in graph)
    found = pass_imports(graph)
    assert not found, ("codegen/blob read the plan facts (nnopt.planfacts), never a pass:\n"
                       + "\n".join(found))


def test_pass_imports_sees_a_planted_pass_import() -> None:
    """The check finds an import of a pass module and of the package, at any level."""
    known = modules()
    for source in ("from ..passes.dynamic import dynamic_plan\n",
                   "def f() -> None:\n    from .. import passes\n"):
        tree = ast.parse(source)
        planted = {t for t, _ in _imports(tree, "nnopt.codegen.planted", False, known)}
        assert pass_imports({"nnopt.codegen.planted": planted}), source


def subpackage_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The module graph collapsed to nnopt's sub-packages and top-level modules
    (``nnopt.ops.conv`` counts as ``nnopt.ops``): an edge where any module of one
    imports any module of the other."""
    def unit(module: str) -> str:
        return ".".join(module.split(".")[:2])

    out: dict[str, set[str]] = {unit(m): set() for m in graph}
    for m, targets in graph.items():
        out[unit(m)].update(unit(t) for t in targets if unit(t) != unit(m))
    return out


def test_no_two_subpackages_import_each_other() -> None:
    """One concept in one place: no circle between sub-packages (issue 43: nnopt.ops
    holds the look-ups by opcode, nnopt.lowering imports no definition)."""
    packages = subpackage_graph(import_graph()[0])
    assert "nnopt.lowering" in packages["nnopt.ops"]  # definitions hold lowerings
    found = cycles(packages)
    message = "\n".join(" -> ".join(one_cycle(packages, c)) for c in found)
    assert not found, f"sub-packages of nnopt importing each other:\n{message}"


def test_subpackage_graph_sees_a_planted_circle() -> None:
    graph = {"nnopt.ops.conv": {"nnopt.lowering.conv"}, "nnopt.lowering.conv": set(),
             "nnopt.lowering": {"nnopt.ops"}, "nnopt.ops": set()}
    assert cycles(subpackage_graph(graph)) == [["nnopt.lowering", "nnopt.ops"]]


NNRT = REPO / "modules" / "nnrt"
#: where ``#include "..."`` resolves in nnrt's builds: the file's own directory first,
#: then the include directories of modules/nnrt/CMakeLists.txt
INCLUDE_DIRS = (NNRT / "include", NNRT / "kernels", NNRT / "src")
_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def include_graph() -> dict[str, set[str]]:
    """{header: nnrt headers it includes} for every header under modules/nnrt, as
    paths relative to modules/nnrt (system headers left out)."""
    graph: dict[str, set[str]] = {}
    for header in sorted(NNRT.rglob("*.h")):
        targets: set[str] = set()
        for name in _INCLUDE.findall(header.read_text()):
            for base in (header.parent, *INCLUDE_DIRS):
                found = base / name
                if found.is_file():
                    targets.add(str(found.resolve().relative_to(NNRT.resolve())))
                    break
        graph[str(header.relative_to(NNRT))] = targets
    return graph


def test_nnrt_headers_include_no_circle() -> None:
    graph = include_graph()
    assert "include/nnrt/defs.h" in graph["include/nnrt/model.h"]  # the graph is seen
    found = cycles(graph)
    message = "\n".join(" -> ".join(one_cycle(graph, c)) for c in found)
    assert not found, f"include circles in modules/nnrt:\n{message}"


def test_public_headers_include_no_private_one() -> None:
    """A header under include/ is the public API: it includes only public headers, never
    the kernels' private bodies (kernels/internal/)."""
    graph = include_graph()
    leaks = sorted(f"{h}: {t}" for h, ts in graph.items() if h.startswith("include/")
                   for t in ts if not t.startswith("include/"))
    assert not leaks, "public nnrt headers including private ones:\n" + "\n".join(leaks)



#: The longest a module of the compiler may grow (issue 43): past it, split by job.
MAX_MODULE_LINES = 900


def test_no_compiler_module_over_the_line_limit() -> None:
    long = sorted(f"{m}: {n} lines" for m, p in modules().items()
                  if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES)
    assert not long, "split these modules by job:\n" + "\n".join(long)

if __name__ == "__main__":
    g, nested = import_graph()
    print(f"function-level imports of nnopt modules: {len(nested)}")
    for line in nested:
        print(f"  {line}")
    for c in cycles(g):
        print("cycle:", " -> ".join(one_cycle(g, c)))
