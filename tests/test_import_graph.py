"""The nnopt package has no import cycles, counting function-level imports too.

The graph is built from the sources with ``ast``: every ``import`` and ``from ... import``
anywhere in a module (module level, inside functions, under ``if TYPE_CHECKING``),
relative imports resolved against the module's package. ``from pkg import name`` is an
edge to ``pkg.name`` when that is a module of nnopt, else to ``pkg``. An edge goes to the
module named only (not to its parent packages), as import-linter/grimp count them.
"""

from __future__ import annotations

import ast
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


if __name__ == "__main__":
    g, nested = import_graph()
    print(f"function-level imports of nnopt modules: {len(nested)}")
    for line in nested:
        print(f"  {line}")
    for c in cycles(g):
        print("cycle:", " -> ".join(one_cycle(g, c)))
