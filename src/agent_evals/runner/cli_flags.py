"""The flags ``agent-evals run`` and ``check`` accept besides their own: ``promptfoo eval``'s.

Every flag the kit's parser does not know goes to ``promptfoo eval``. A flag Promptfoo does
not know either (``--filter-patern``, ``--repaly``) would start portals and then make every
suite's Promptfoo print its usage, or be taken for something else; :func:`unknown_flag`
finds it before anything starts, for one line with a did-you-mean over both sets of flags.

``PROMPTFOO_EVAL_FLAGS`` is Promptfoo 0.123's ``promptfoo eval --help``
(``tests/runner/test_cli_flags.py`` reads the installed Promptfoo's help and compares).
"""

from __future__ import annotations

import difflib
from pathlib import Path
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

Takes = Literal["none", "one", "optional", "many"]  # no value, one, an optional one, one or more

PROMPTFOO_EVAL_FLAGS: dict[str, Takes] = {
    "-c": "many", "--config": "many", "-a": "one", "--assertions": "one", "-p": "many", "--prompts": "many",
    "-r": "many", "--providers": "many", "-t": "one", "--tests": "one", "-v": "one", "--vars": "one",
    "--model-outputs": "one", "--prompt-prefix": "one", "--prompt-suffix": "one", "--var": "one", "--tag": "one",
    "-j": "one", "--max-concurrency": "one", "--repeat": "one", "--delay": "one", "--no-cache": "none",
    "--remote": "none", "-n": "one", "--filter-first-n": "one", "--filter-pattern": "one", "--filter-range": "one",
    "--filter-prompts": "one", "--filter-providers": "one", "--filter-targets": "one", "--filter-sample": "one",
    "--filter-sample-seed": "one", "--filter-failing": "one", "--filter-failing-only": "one",
    "--filter-errors-only": "one", "--filter-metadata": "one", "-o": "many", "--output": "many", "--table": "none",
    "--no-table": "none", "--table-cell-max-length": "one", "--share": "none", "--no-share": "none",
    "--resume": "optional", "--retry-errors": "none", "--no-write": "none", "--grader": "one",
    "--suggest-prompts": "one", "-w": "none", "--watch": "none", "-x": "many", "--extension": "many",
    "--description": "one", "--no-progress-bar": "none", "--env-file": "one", "--env-path": "one", "-h": "none",
    "--help": "none",
}


def unknown_flag(args: Sequence[str], kit_flags: Iterable[str]) -> str | None:
    """One line for the first argument neither the kit nor ``promptfoo eval`` knows (``args`` are
    what the kit's parser left), with the closest known flag; None when every one is known."""
    kit = list(kit_flags)
    known = [*kit, *PROMPTFOO_EVAL_FLAGS]
    takes: Takes = "none"
    for arg in args:
        if not arg.startswith("-") or arg == "-" or _number(arg):
            if takes == "none":
                return f"unexpected argument {arg!r}: give one suite (or all), then flags"
            takes = "many" if takes == "many" else "none"
            continue
        flag = arg.split("=", 1)[0]
        if flag not in PROMPTFOO_EVAL_FLAGS and not (len(flag) > 2 and flag[:2] in PROMPTFOO_EVAL_FLAGS
                                                     and not flag.startswith("--")):  # -j4
            close = difflib.get_close_matches(flag, known, n=1, cutoff=0.7)
            hint = f"; did you mean {close[0]}?" if close else " (see --help; other flags go to promptfoo eval)"
            return f"unknown flag {flag}{hint}"
        attached = "=" in arg or (not arg.startswith("--") and len(arg) > 2)
        takes = "none" if attached else PROMPTFOO_EVAL_FLAGS.get(flag, "none")
        if takes == "optional":
            takes = "one"
    return None


def suite_first(args: Sequence[str], kit_flags: Mapping[str, Takes], suites: Sequence[str]) -> list[str]:
    """``args`` with the suite first (``""`` when none is given), so that argparse never takes a flag's value
    for it: the first word that is no flag's value, or a suite's name where a flag may do without a value
    (``--replay tickets``, unless such a folder exists) or has one already (``-o a.json tickets``)."""
    takes: Takes = "none"
    values = 0
    for index, arg in enumerate(args):
        if arg == "--":
            break
        if arg.startswith("-") and arg != "-" and not _number(arg):
            flag = arg.split("=", 1)[0]
            takes = kit_flags.get(flag) or PROMPTFOO_EVAL_FLAGS.get(flag, "none")
            if "=" in arg or (not arg.startswith("--") and len(arg) > 2):
                takes = "none"
            values = 0
            continue
        named = arg in suites and (takes == "optional" and not Path(arg).is_dir() or takes == "many" and values)
        if takes == "none" or named:
            return [arg, *args[:index], *args[index + 1:]]
        values += 1
        takes = "many" if takes == "many" else "none"
    return ["", *args]


def _number(arg: str) -> bool:
    try:
        float(arg)
    except ValueError:
        return False
    return True
