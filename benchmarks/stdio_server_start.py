"""What starting an agent's stdio MCP servers costs per conversation.

Opens the agent's tools (``McpTools``: every server at once, each session listing its tools) over
stdio servers and closes them again, ``--conversations`` times, and prints the median and the
slowest opening in milliseconds for each set of servers: one and two copies of a small Python
server written with the MCP SDK (``tests/agent/notes_server.py``), and one and two
``mcp-server-git`` (PyPI) on a throwaway repository when it is installed. The issue's target:
under 0.5 s per conversation for two servers on 2 cores.

Then the release agent's own two servers (``mcp-server-git`` and the filesystem server, resolved from
its ``agent.yaml`` on a release run's working copy), per conversation both ways: started for each
conversation (``lifetime: conversation``) and kept for the worker (``lifetime: worker``, what the agent
uses), each conversation in an event loop of its own as in a Promptfoo worker, the working copy reset
before each one as the release pack does. ``mean`` is what a worker pays per conversation over
``--conversations`` of them, its first (which starts the servers) included.

    .venv/bin/python benchmarks/stdio_server_start.py --conversations 10
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dataclasses import replace

from agent_evals.agent.config import load_agent_config
from agent_evals.agent.mcp_servers import StdioServer, resolve_servers
from agent_evals.agent.mcp_tools import McpTools
from agent_evals.agent.worker_sessions import WORKER_SESSIONS

ROOT = Path(__file__).resolve().parents[1]
NOTES = ROOT / "tests" / "agent" / "notes_server.py"


async def open_close(servers: list[StdioServer]) -> float:
    started = time.perf_counter()
    async with McpTools(servers) as tools:
        assert tools.specs
        opened = time.perf_counter() - started
    return opened * 1000


def measure(servers: list[StdioServer], conversations: int) -> dict[str, float]:
    times = [asyncio.run(open_close(servers)) for _ in range(conversations)]
    return {"median_ms": round(statistics.median(times), 1), "max_ms": round(max(times), 1)}


def git_repository(folder: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    (folder / "README.md").write_text("a test repository\n")
    subprocess.run(["git", "-C", str(folder), "add", "."], check=True)
    subprocess.run(["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"],
                   check=True)
    return folder


def release_agent(conversations: int) -> dict[str, dict[str, float]]:
    """The release agent's two servers on a release run's working copy, started per conversation or kept."""
    import os

    from agent_evals.packs.release.repository import SERVER_ENVIRONMENT, start_run

    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        run = start_run(Path(tmp), "bench")
        config = load_agent_config("release-notes")
        copy = run.working_copy("bench--worker")
        servers = [s for s in resolve_servers(config.name, config.servers, {"REPO": str(copy.path), **SERVER_ENVIRONMENT},
                                              environ=os.environ, base_dir=config.folder) if isinstance(s, StdioServer)]
        for lifetime in ("conversation", "worker"):
            chosen = [replace(s, lifetime=lifetime) for s in servers]
            times = []
            for _ in range(conversations):
                started = time.perf_counter()
                run.working_copy("bench--worker")  # reset in place, as before each conversation
                asyncio.run(open_close(chosen))
                times.append((time.perf_counter() - started) * 1000)
            WORKER_SESSIONS.close()
            results[f"release agent, lifetime: {lifetime}"] = {
                "first_ms": round(times[0], 1), "median_ms": round(statistics.median(times), 1),
                "mean_ms": round(statistics.mean(times), 1)}
        run.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=10)
    args = parser.parse_args()
    notes = [StdioServer(f"notes{i}", sys.executable, (str(NOTES),), tools=("add_note",) if i == 0 else ("count_notes",))
             for i in range(2)]
    results = {"notes x1": measure(notes[:1], args.conversations), "notes x2": measure(notes, args.conversations)}
    git = shutil.which("mcp-server-git", path=str(Path(sys.executable).parent))
    if git is not None:
        with tempfile.TemporaryDirectory() as tmp:
            repo = git_repository(Path(tmp))
            servers = [StdioServer(f"git{i}", git, ("--repository", str(repo)), tools=(("git_status",), ("git_log",))[i]) for i in range(2)]
            results["mcp-server-git x1"] = measure(servers[:1], args.conversations)
            results["mcp-server-git x2"] = measure(servers, args.conversations)
            results["notes + mcp-server-git"] = measure([notes[0], servers[0]], args.conversations)
    results.update(release_agent(args.conversations))
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
