"""What is on main: the hub and every spoke, read once per main commit and cached."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent_evals.packs.spoke.portal.errors import GitError
from agent_evals.packs.spoke.portal.gitrepo import MAIN, GitRepo
from agent_evals.packs.spoke.portal.names import SPOKES_DIR
from agent_evals.packs.spoke.portal.rules import Hub

log = logging.getLogger(__name__)
HUB_FILE = "hub.json"


@dataclass(frozen=True)
class MainSnapshot:
    """main at commit ``sha``: the hub and the spokes (file stem -> configuration, sorted)."""

    sha: str
    hub: Hub
    hub_config: Mapping[str, Any]
    spokes: Mapping[str, Mapping[str, Any]]


def parse_hub(config: Mapping[str, Any]) -> Hub:
    subnets = config.get("subnets")
    bastion = subnets.get("AzureBastionSubnet") if isinstance(subnets, Mapping) else None
    return Hub(name=str(config["name"]), address_space=tuple(config["addressSpace"]), bastion_prefix=bastion)


class MainReader:
    """Reads main through ``repo``; a snapshot is reused while main's commit is unchanged."""

    def __init__(self, repo: GitRepo) -> None:
        self._repo = repo
        self._cached: MainSnapshot | None = None
        self._load_lock = threading.Lock()

    def current(self) -> MainSnapshot:
        sha = self._repo.resolve(f"refs/heads/{MAIN}")
        if sha is None:
            raise GitError(f"the repository {self._repo.path} has no {MAIN} branch")
        cached = self._cached
        if cached is not None and cached.sha == sha:
            return cached
        with self._load_lock:
            if self._cached is None or self._cached.sha != sha:
                self._cached = self.load(sha)
            return self._cached

    def load(self, sha: str) -> MainSnapshot:
        files = self._repo.list_files(sha)
        wanted = {
            path: blob
            for path, blob in files.items()
            if path == HUB_FILE or (path.startswith(f"{SPOKES_DIR}/") and path.endswith(".json"))
        }
        blobs = self._repo.read_blobs(list(dict.fromkeys(wanted.values())))
        hub_config = json.loads(blobs[wanted[HUB_FILE]])
        spokes: dict[str, Mapping[str, Any]] = {}
        for path in sorted(wanted):
            if path == HUB_FILE:
                continue
            stem = path[len(SPOKES_DIR) + 1 : -len(".json")]
            try:
                config = json.loads(blobs[wanted[path]])
            except ValueError:
                log.warning("skipping %s on main: not valid JSON", path)
                continue
            if isinstance(config, dict):
                spokes[stem] = config
        return MainSnapshot(sha=sha, hub=parse_hub(hub_config), hub_config=hub_config, spokes=spokes)
