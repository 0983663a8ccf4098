"""``npm run eval:view`` listens on this machine only, unless ``--host`` says otherwise; its flags are listed."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import PROJECT_ROOT, clean_env

pytestmark = pytest.mark.skipif(
    not (PROJECT_ROOT / "node_modules" / ".bin" / "promptfoo").exists(), reason="npm packages not installed"
)


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        for task in Path(f"/proc/{current}/task").glob("*/children"):
            try:
                children = [int(c) for c in task.read_text().split()]
            except OSError:
                continue
            out += children
            todo += children
    return out


def _listening(pid: int) -> list[str]:
    """The TCP addresses ``pid`` listens on (``127.0.0.1``, ``0.0.0.0``, ``::``…), from /proc."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").glob("*"):
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = []
    for table, family in (("tcp", socket.AF_INET), ("tcp6", socket.AF_INET6)):
        try:
            lines = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # LISTEN
                raw = bytes.fromhex(fields[1].split(":")[0])
                words = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
                found.append(socket.inet_ntop(family, words))
    return found


def _listens_on(tmp_path: Path, *flags: str) -> list[str]:
    env = {**clean_env(), "PROMPTFOO_CONFIG_DIR": str(tmp_path / "pf"), "HOME": str(tmp_path)}
    process = subprocess.Popen([sys.executable, "-m", "agent_evals.cli", "view", "-n", "-p", "0", *flags],
                               env=env, cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               start_new_session=True)
    try:
        deadline = time.monotonic() + 120  # a failure guard: Promptfoo's viewer starts in a few seconds
        while time.monotonic() < deadline:
            addresses = [a for child in _descendants(process.pid) for a in _listening(child)]
            if addresses:
                return addresses
            assert process.poll() is None, process.stdout.read().decode() if process.stdout else ""
            time.sleep(0.1)
        pytest.fail("the viewer never listened")
    finally:
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        if process.stdout:
            process.stdout.close()


def test_the_viewer_listens_on_loopback_by_default(tmp_path: Path) -> None:
    assert set(_listens_on(tmp_path)) == {"127.0.0.1"}


def test_host_names_the_address_to_share_on(tmp_path: Path) -> None:
    # 127.0.0.2 (loopback too, so the test exposes nothing) stands for an address the user shares on
    assert set(_listens_on(tmp_path, "--host", "127.0.0.2")) == {"127.0.0.2"}


def test_its_help_lists_the_flags() -> None:
    done = subprocess.run(["npm", "run", "eval:view", "--", "--help"], cwd=PROJECT_ROOT, env=clean_env(),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    for flag in ("--host HOST", "-p PORT, --port PORT", "-y, --yes", "-n, --no", "--filter-description PATTERN"):
        assert flag in done.stdout, done.stdout
