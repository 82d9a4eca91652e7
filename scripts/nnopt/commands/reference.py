"""The command-line reference as Markdown, generated from the argument parser
(:func:`nnopt.cli.build_parser`): each command's description, usage and options by
group, with their choices and defaults. The documentation site renders it at build time
(``scripts/mkdocs_hooks.py`` puts it into docs/cli.md), so it cannot drift from the
code."""

from __future__ import annotations

import argparse
import re

#: The line of docs/cli.md the generated reference replaces.
MARKER = "{{ cli_reference }}"


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _text(text: str) -> str:
    """Help text as one Markdown line: file templates (``<name>_model.c``) as code, so
    that no ``<name>`` reads as an HTML tag."""
    return re.sub(r"([\w./-]*(?:<[^>\s]+>[\w/-]*)+(?:\.\w[\w/.-]*\w)?)", r"`\1`",
                  " ".join(text.split()))


def _cell(text: str) -> str:
    """Text safe in a Markdown table cell: one line, pipes escaped, templates as code."""
    return _text(text.replace("|", "\\|"))


def _option_row(action: argparse.Action) -> str:
    if action.option_strings:
        metavar = action.metavar or (action.dest.upper() if action.nargs != 0 else None)
        if action.choices is not None and action.metavar is None:
            metavar = "{" + ",".join(map(str, action.choices)) + "}"
        names = ", ".join(f"`{o}`" for o in action.option_strings)
        if metavar and action.nargs != 0:
            names += f" `{metavar}`"
    else:
        names = f"`{action.metavar or action.dest}`"
    helptext = action.help or ""
    if "%(" in helptext:
        helptext = helptext % {"default": action.default, "prog": "nnopt"}
    extras: list[str] = []
    if action.choices is not None and action.metavar is not None:
        extras.append("one of " + ", ".join(f"`{c}`" for c in action.choices))
    if (action.option_strings and action.default not in (None, False, argparse.SUPPRESS)
            and "default" not in helptext):
        extras.append(f"default `{action.default}`")
    if isinstance(action, argparse._AppendAction):
        extras.append("repeatable")
    if extras and "repeatable" in helptext:
        extras = [e for e in extras if e != "repeatable"]
    text = helptext + (f" ({'; '.join(extras)})" if extras else "")
    return f"| {names} | {_cell(text)} |"


def _command(name: str, parser: argparse.ArgumentParser) -> list[str]:
    lines = [f"## nnopt {name}", ""]
    if parser.description:
        lines += [_text(p) for p in parser.description.split("\n\n")]
        lines = [*lines[:2], "\n\n".join(lines[2:]), ""]
    usage = parser.format_usage().removeprefix("usage: ").strip()
    lines += ["```", " ".join(usage.split()), "```", ""]
    for group in parser._action_groups:
        actions = [a for a in group._group_actions if not isinstance(a, argparse._HelpAction)]
        if not actions:
            continue
        title = group.title or "options"
        lines += [f"**{title[0].upper()}{title[1:]}**", "", "| option | what |", "|---|---|"]
        lines += [_option_row(a) for a in actions]
        lines.append("")
    return lines


def markdown(parser: argparse.ArgumentParser) -> str:
    """The reference of ``parser`` (the ``nnopt`` parser): one section per command."""
    out: list[str] = []
    for name, sub in _subcommands(parser).items():
        out += _command(name, sub)
    return "\n".join(out).rstrip() + "\n"
