"""``nnopt ops``: every operator nnopt supports, with the element types it takes."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..oplist import dtype_table_markdown, supported_operators

DESCRIPTION = """\
List every TFLite builtin operator (and custom operator, by its custom code) nnopt
plans and generates C for, with the element
types its kernel takes ("int8->int16": the output type differs from the input's), and
its planning traits: element-wise ops run in place over a dying input, aliases are
planned without a copy. "blob: no" marks operators the runtime-loaded model blob
(--emit blob) does not carry yet (refused by name there). The list is read from the
operator registry and the lowerings, so it is exactly what nnopt accepts."""


def add_parser(sub: Any) -> None:
    p = sub.add_parser("ops", help="list the supported operators and their dtypes",
                       description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.add_argument("--markdown", action="store_true",
                   help="print, per operator, the element types TFLM's kernel takes, those "
                   "nnopt takes and each refused one with the reason, as the Markdown "
                   "table of the documentation's operators page")
    p.set_defaults(func=run)


#: How the listing names the registry's ``elementwise`` trait: "binary" there means
#: "combines several inputs element by element" (ADD, but also ADD_N's n inputs and
#: SELECT_V2's three), so it reads "several inputs" here; the JSON keeps the trait.
_ELEMENTWISE_TEXT = {"unary": "one input", "binary": "several inputs"}


def _traits(elementwise: str | None, alias: bool, window: str | None,
            custom: bool = False) -> str:
    out = ["custom"] if custom else []
    if elementwise:
        out.append(f"element-wise ({_ELEMENTWISE_TEXT.get(elementwise, elementwise)}, "
                   "in place)")
    if alias:
        out.append("alias")
    if window:
        out.append(f"window ({window})")
    return ", ".join(out)


def run(args: argparse.Namespace) -> int:
    if args.markdown:
        print(dtype_table_markdown(), end="")
        return 0
    ops = supported_operators()
    if args.json:
        print(json.dumps({"count": len(ops), "operators": [o.to_json() for o in ops]},
                         indent=2))
        return 0
    rows = [(o.opcode, "yes" if o.blob else "no",
             _traits(o.elementwise, o.alias, o.window, o.custom) or "-",
             ", ".join(o.dtypes) or "-")
            for o in ops]
    head = ("operator", "blob", "traits", "dtypes")
    widths = [max(len(r[i]) for r in (head, *rows)) for i in range(3)]
    for r in (head, *rows):
        print("  ".join(c.ljust(w) for c, w in zip(r[:3], widths, strict=True)) + "  " + r[3])
    custom = sum(o.custom for o in ops)
    print(f"\n{len(ops)} operators ({len(ops) - custom} builtins, {custom} custom)")
    return 0
