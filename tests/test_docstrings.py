"""The compiler's docstrings name only things that exist.

Every Sphinx cross-reference (``:func:`x```, ``:class:``, ``:mod:``, ``:meth:``,
``:data:``, ``:attr:``, ``:exc:``) in a module, class or function docstring of
``scripts/nnopt`` must resolve: absolute (``nnopt.planner.plan_model``), relative to the
module's package (``.call.KernelCall``, ``..errors.NnoptError``), or a name the module
defines or imports (``plan_model``, ``OpDef.traits``). A refactoring that renames or
removes a function then fails here instead of leaving a docstring that points nowhere.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import nnopt

ROLE = re.compile(r":(?:func|class|mod|meth|data|attr|exc):`~?([A-Za-z_.][A-Za-z0-9_.]*)`")


def _modules() -> list[ModuleType]:
    out = [nnopt]
    for info in pkgutil.walk_packages(nnopt.__path__, "nnopt."):
        if info.name.endswith("__main__"):  # runs the CLI when imported
            continue
        out.append(importlib.import_module(info.name))
    return out


def _walk(obj: Any, dotted: str) -> bool:
    for part in dotted.split("."):
        if not part:
            return False
        if hasattr(obj, part):
            obj = getattr(obj, part)
            continue
        # a submodule not imported by its package yet, or a dataclass field
        name = getattr(obj, "__name__", None)
        if isinstance(obj, ModuleType) and name:
            try:
                obj = importlib.import_module(f"{name}.{part}")
                continue
            except ImportError:
                return False
        fields = getattr(obj, "__dataclass_fields__", None) or {}
        annotations = getattr(obj, "__annotations__", None) or {}
        if part in fields or part in annotations:
            obj = None
            continue
        return False
    return True


def _resolves(ref: str, mod: ModuleType) -> bool:
    if ref.startswith("."):
        level = len(ref) - len(ref.lstrip("."))
        pkg = mod.__name__ if hasattr(mod, "__path__") else mod.__name__.rpartition(".")[0]
        for _ in range(level - 1):
            pkg = pkg.rpartition(".")[0]
        return _walk(importlib.import_module(pkg), ref.lstrip("."))
    if ref == "nnopt" or ref.startswith("nnopt."):
        return _walk(nnopt, ref.removeprefix("nnopt").lstrip("."))
    return _walk(mod, ref)


def _docstrings(mod: ModuleType) -> list[tuple[int, str, str]]:
    """(line, docstring, dotted name of the enclosing class or "") of every
    module, class and function docstring of ``mod``."""
    src = mod.__file__
    assert src is not None
    tree = ast.parse(Path(src).read_text(encoding="utf-8"))
    out: list[tuple[int, str, str]] = []

    def visit(node: ast.AST, cls: str) -> None:
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            inner = f"{cls}.{node.name}".lstrip(".") if isinstance(node, ast.ClassDef) else cls
            doc = ast.get_docstring(node, clean=False)
            if doc:
                out.append((getattr(node, "lineno", 1), doc, inner))
            for child in ast.iter_child_nodes(node):
                visit(child, inner)

    visit(tree, "")
    return out


def test_every_docstring_reference_resolves() -> None:
    broken = []
    for mod in _modules():
        for line, doc, cls in _docstrings(mod):
            for ref in ROLE.findall(doc):
                # a method or attribute of the class the docstring is in
                if cls and not ref.startswith(".") and _resolves(f"{cls}.{ref}", mod):
                    continue
                if not _resolves(ref, mod):
                    broken.append(f"{mod.__name__}:{line}: {ref}")
    assert not broken, "docstrings name what does not exist:\n" + "\n".join(broken)


def test_the_check_finds_a_missing_name() -> None:
    mod = importlib.import_module("nnopt.planner")
    assert _resolves("nnopt.planner.plan_model", mod)
    assert _resolves("plan_model", mod)
    assert not _resolves("nnopt.planner.no_such_function", mod)
    assert not _resolves("no_such_function", mod)
