"""Fixture spokes: a spoke a test case puts on main for its conversation, and takes away after.

A case that relies on a spoke the seed data lacks asks for one (``POST /api/fixtures/spokes``):
the portal commits ``spokes/<name>.json`` on main, validated like any change, and records who
asked (eval and test id). ``remove`` commits its deletion; cleanup removes every fixture of an
eval or a test (``POST /api/fixtures/remove``), so a case that errored or was interrupted
leaves nothing behind once its run is swept. A fixture spoke is on main: every conversation
running on the same portal meanwhile sees it, so give it a name and tags no other case asks about.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from agent_evals.packs.spoke.portal.errors import ConflictError, InvalidInputError, NotFoundError
from agent_evals.packs.spoke.portal.gitrepo import MAIN, GitRepo
from agent_evals.packs.spoke.portal.names import check_spoke_name, spoke_file
from agent_evals.packs.spoke.portal.prstore import PullRequestStore
from agent_evals.packs.spoke.portal.pullrequests import Origin, PullRequestWorkflow, now, spoke_bytes
from agent_evals.packs.spoke.portal.snapshot import MainReader
from agent_evals.packs.spoke.portal.validation import SpokeValidator

log = logging.getLogger(__name__)


class FixtureSpokes:
    def __init__(
        self, repo: GitRepo, store: PullRequestStore, reader: MainReader, validator: SpokeValidator,
        workflow: PullRequestWorkflow,
    ) -> None:
        self._repo, self._store, self._reader, self._validator = repo, store, reader, validator
        self._lock = workflow.lock  # one writer of main at a time, pull requests included

    def add(self, name: str, config: Mapping[str, Any], origin: Origin) -> str:
        """Commit a new, valid spoke on main; answers its file."""
        check_spoke_name(name)
        path = spoke_file(name)
        with self._lock:
            main = self._reader.current()
            if name in main.spokes:
                raise ConflictError(f"spoke {name!r} is already on {MAIN}: a fixture spoke needs a new name")
            result = self._validator.validate(config, hub=main.hub, spokes=main.spokes, spoke_name=name)
            if not result.valid:
                shown = "; ".join(f"{e.path}: {e.message}" for e in result.errors[:3])
                raise InvalidInputError(f"fixture spoke {name!r} does not pass validation: {shown}")
            tree = self._repo.write_tree({path: self._repo.write_blob(spoke_bytes(config))}, base=main.sha)
            message = f"Fixture: add {path}\n\nFixture-Eval-Id: {origin.eval_id}\nFixture-Test-Id: {origin.test_id}\n"
            head = self._repo.commit(tree, [main.sha], message)
            self._repo.set_branch(MAIN, head, main.sha)
            self._store.add_fixture_spoke(name, origin.eval_id, origin.test_id, now())
        log.info("fixture spoke %s added to %s for %s", name, MAIN, origin.test_id or origin.eval_id or "no test")
        return path

    def remove(self, name: str) -> bool:
        """Delete a fixture spoke from main; ``False`` when it was already gone."""
        with self._lock:
            if name not in self._store.fixture_spokes():
                if name in self._reader.current().spokes:
                    raise NotFoundError(f"spoke {name!r} is not a fixture spoke: only fixture spokes can be removed")
                return False
            main = self._reader.current()
            if name in main.spokes:
                path = spoke_file(name)
                tree = self._repo.write_tree({}, base=main.sha, remove=[path])
                head = self._repo.commit(tree, [main.sha], f"Fixture: remove {path}\n")
                self._repo.set_branch(MAIN, head, main.sha)
            self._store.remove_fixture_spoke(name, now())
        log.info("fixture spoke %s removed from %s", name, MAIN)
        return True

    def remove_all(self, *, eval_id: str | None = None, test_id: str | None = None) -> list[str]:
        """Remove the fixture spokes of an eval or a test (one of them is required)."""
        if not (eval_id or test_id):
            raise InvalidInputError("removing fixtures needs an eval_id or a test_id")
        names = self._store.fixture_spokes(eval_id=eval_id, test_id=test_id)
        return [name for name in names if self.remove(name)]

    def names(self, *, eval_id: str | None = None, test_id: str | None = None) -> list[str]:
        return self._store.fixture_spokes(eval_id=eval_id, test_id=test_id)
