"""Run ``promptfoo`` as a child the runner controls: its own session (a terminal's Ctrl-C reaches
the runner only, which forwards one SIGINT), killed if the runner dies (Linux), its output read
line by line (the eval id is taken from it) and handed to ``echo``."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass

from agent_evals.processes import start_detached
from agent_evals.paths import project_root
from agent_evals.runner.interrupts import Interrupts
from agent_evals.testing.pause_points import pause_point

EVAL_ID = re.compile(r"\b(eval-[A-Za-z0-9]+-\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\b")


@dataclass
class PromptfooResult:
    code: int
    eval_id: str | None


def run_promptfoo(
    command: list[str],
    env: dict[str, str],
    interrupts: Interrupts,
    echo: Callable[[str], None],
    on_eval_id: Callable[[str], None] | None = None,
) -> PromptfooResult:
    process = start_detached(
        command, die_with_parent=True, env=env, cwd=project_root(), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
    )
    pause_point("promptfoo-starting")
    interrupts.started(process)
    eval_id: str | None = None
    try:
        assert process.stdout is not None
        for raw in iter(process.stdout.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\n")
            if eval_id is None and (match := EVAL_ID.search(line)):
                eval_id = match.group(1)
                if on_eval_id is not None:
                    on_eval_id(eval_id)
            echo(line)
        code = process.wait()
    except BaseException:
        if process.poll() is None:
            process.kill()
            process.wait()
        raise
    finally:
        interrupts.ended(process)
    return PromptfooResult(code, eval_id)
