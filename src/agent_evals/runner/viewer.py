"""``agent-evals view`` (``npm run eval:view``): Promptfoo's viewer over this project's results,
listening on this machine only unless asked to share.

``promptfoo view`` has no host option and listens on every interface, so the results (prompts,
conversations, tool arguments) were reachable from the machine's own address. The kit preloads
``listen_host.cjs`` into it, which gives its listen the host ``--host`` names: ``127.0.0.1`` by
default, ``0.0.0.0`` (or an address of the machine) to share the viewer on the network.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from agent_evals.paths import project_root
from agent_evals.runner.promptfoo_process import promptfoo_command, promptfoo_env, with_node_preload

DEFAULT_HOST = "127.0.0.1"
PRELOAD = Path(__file__).with_name("listen_host.cjs")
HOST_ENV = "AGENT_EVALS_LISTEN_HOST"


def view_env(host: str) -> dict[str, str]:
    """Promptfoo's environment with the preload that binds the viewer to ``host``."""
    env = with_node_preload(promptfoo_env(), PRELOAD)
    env[HOST_ENV] = host
    return env


def view(promptfoo_args: list[str], *, host: str = DEFAULT_HOST) -> int:
    """Run ``promptfoo view`` with ``promptfoo_args`` on ``host``; 130 after Ctrl-C."""
    if host not in (DEFAULT_HOST, "localhost", "::1"):
        print(f"NOTE: the viewer listens on {host}: anyone who can reach this machine there sees the results",
              flush=True)
    process = subprocess.Popen(promptfoo_command("view", *promptfoo_args), env=view_env(host), cwd=project_root())
    try:
        return process.wait()
    except KeyboardInterrupt:
        process.wait()
        return 130
