"""The pull request workflow over the git repository and the record store.

Every operation that writes runs under one lock, so concurrent requests queue up and
the repository and the records always agree. A pull request is a real branch
``pr/<id>-<slug>`` with one commit on top of main that adds or changes
``spokes/<name>.json``; the validation gate runs when it is created.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from agent_evals.packs.spoke.portal.errors import ConflictError, InvalidInputError, NotFoundError
from agent_evals.packs.spoke.portal.gitrepo import MAIN, GitRepo, Identity
from agent_evals.packs.spoke.portal.names import branch_slug, spoke_file
from agent_evals.packs.spoke.portal.prstore import PullRequestRecord, PullRequestStore
from agent_evals.packs.spoke.portal.snapshot import MainReader
from agent_evals.packs.spoke.portal.validation import SpokeValidator

log = logging.getLogger(__name__)
DEFAULT_CREATED_BY = "portal-user"
_UNSAFE_IDENTITY = re.compile(r"[<>\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Origin:
    """Who asked for a pull request (from the X-Created-By, X-Eval-Id and X-Test-Id headers)."""

    created_by: str = DEFAULT_CREATED_BY
    eval_id: str | None = None
    test_id: str | None = None


MAX_HEADER_VALUE = 200


def origin_from_headers(headers: Mapping[str, str] | None) -> Origin:
    """The ``Origin`` of a request from its X-Created-By, X-Eval-Id and X-Test-Id headers.

    Values are stripped of control characters and cut to 200 characters; a missing or
    empty X-Created-By gives ``portal-user``.
    """

    def value(name: str) -> str | None:
        raw = headers.get(name) if headers is not None else None
        cleaned = _UNSAFE_IDENTITY.sub("", raw or "").strip()[:MAX_HEADER_VALUE]
        return cleaned or None

    return Origin(
        created_by=value("x-created-by") or DEFAULT_CREATED_BY,
        eval_id=value("x-eval-id"),
        test_id=value("x-test-id"),
    )


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def spoke_bytes(config: Mapping[str, Any]) -> bytes:
    return (json.dumps(config, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


class PullRequestWorkflow:
    def __init__(
        self, repo: GitRepo, store: PullRequestStore, reader: MainReader, validator: SpokeValidator
    ) -> None:
        self._repo, self._store, self._reader, self._validator = repo, store, reader, validator
        self.lock = threading.Lock()

    def create(
        self,
        spoke_name: str,
        config: Mapping[str, Any],
        title: str,
        description: str,
        origin: Origin,
        source_spoke: str | None = None,
    ) -> PullRequestRecord:
        """Commit ``config`` as ``spokes/<spoke_name>.json`` on a new PR branch and run the gate."""
        path = spoke_file(spoke_name)
        with self.lock:
            main = self._reader.current()
            if main.spokes.get(spoke_name) == config:
                raise InvalidInputError(
                    f"nothing to change: the configuration equals {path} on {MAIN}; "
                    "edit it before opening a pull request"
                )
            result = self._validator.validate(config, hub=main.hub, spokes=main.spokes, spoke_name=spoke_name)
            tree = self._repo.write_tree({path: self._repo.write_blob(spoke_bytes(config))}, base=main.sha)
            message = _message(title, description, path, origin, source_spoke)
            head = self._repo.commit(tree, [main.sha], message, _identity(origin.created_by))
            pr_id = self._store.next_id()
            branch = f"pr/{pr_id}-{branch_slug(title)}"
            self._repo.set_branch(branch, head, None)
            stamp = now()
            record = PullRequestRecord(
                id=pr_id,
                title=title,
                description=description,
                spoke_name=spoke_name,
                file=path,
                source_branch=branch,
                target_branch=MAIN,
                status="active",
                created_at=stamp,
                created_by=origin.created_by,
                eval_id=origin.eval_id,
                test_id=origin.test_id,
                validation_status="succeeded" if result.valid else "failed",
                validation_errors=tuple(result.errors),
                source_spoke=source_spoke,
                base_commit=main.sha,
                head_commit=head,
                merge_commit=None,
                updated_at=stamp,
            )
            try:
                self._store.insert(record)
            except BaseException:
                self._repo.delete_branch(branch)
                raise
        log.info(
            "created pull request %d (%s) for %s: validation %s",
            pr_id,
            branch,
            path,
            record.validation_status,
        )
        return record

    def get(self, pr_id: int) -> PullRequestRecord:
        record = self._store.get(pr_id)
        if record is None:
            raise NotFoundError(f"unknown pull request {pr_id}")
        return record

    def abandon(self, pr_id: int) -> PullRequestRecord:
        """Abandon an active PR and delete its branch; abandoning again answers the same."""
        with self.lock:
            record = self.get(pr_id)
            if record.status == "completed":
                raise ConflictError(
                    f"pull request {pr_id} is completed (merged into {MAIN}); it can no longer be abandoned"
                )
            self._repo.delete_branch(record.source_branch)
            if record.status == "abandoned":
                return record
            stamp = now()
            self._store.set_status(pr_id, "abandoned", stamp)
        log.info("abandoned pull request %d", pr_id)
        return replace(record, status="abandoned", updated_at=stamp)

    def complete(self, pr_id: int) -> PullRequestRecord:
        """Merge an active PR that passed validation into main (administrators only)."""
        with self.lock:
            record = self.get(pr_id)
            if record.status == "completed":
                return record
            if record.status == "abandoned":
                raise ConflictError(f"pull request {pr_id} is abandoned; it cannot be completed")
            if record.validation_status == "failed":
                raise ConflictError(
                    f"pull request {pr_id} failed the validation gate ({len(record.validation_errors)} "
                    "error(s)) and cannot be completed; fix the configuration in a new pull request"
                )
            merge = self._merge(record)
            self._repo.delete_branch(record.source_branch)
            stamp = now()
            self._store.set_status(pr_id, "completed", stamp, merge_commit=merge)
        log.info("completed pull request %d: %s is now %s", pr_id, MAIN, merge[:12])
        return replace(record, status="completed", updated_at=stamp, merge_commit=merge)

    def _merge(self, record: PullRequestRecord) -> str:
        main = self._reader.current()
        if main.sha == record.base_commit:
            self._repo.set_branch(MAIN, record.head_commit, main.sha)  # fast-forward
            return record.head_commit
        config = json.loads(self._repo.read_file(record.head_commit, record.file) or b"null")
        result = self._validator.validate(
            config, hub=main.hub, spokes=main.spokes, spoke_name=record.spoke_name
        )
        if not result.valid:
            shown = "; ".join(f"{e.path}: {e.message}" for e in result.errors[:3])
            raise ConflictError(
                f"pull request {record.id} no longer passes validation against the current "
                f"{MAIN} (it changed since the PR was created): {shown}"
            )
        tree = self._repo.merge_tree(main.sha, record.head_commit)
        if tree is None:
            raise ConflictError(
                f"pull request {record.id} conflicts with {MAIN}: {record.file} was changed "
                "there since the PR was created"
            )
        merge = self._repo.commit(
            tree, [main.sha, record.head_commit], f"Merge pull request {record.id}: {record.title}\n"
        )
        self._repo.set_branch(MAIN, merge, main.sha)
        return merge

    def diff(self, record: PullRequestRecord) -> str:
        return self._repo.diff(record.base_commit, record.head_commit, record.file)

    def reconcile(self) -> None:
        """Delete PR branches without an active record (left by a crash between ref and record)."""
        active = {r.source_branch for r in self._store.list(status="active")}
        with self.lock:
            for branch in self._repo.branches("pr/"):
                if branch not in active:
                    log.warning("deleting stray branch %s (no active pull request)", branch)
                    self._repo.delete_branch(branch)


def _identity(created_by: str) -> Identity:
    name = _UNSAFE_IDENTITY.sub("", created_by).strip() or DEFAULT_CREATED_BY
    return Identity(name=name, email=f"{branch_slug(name)}@portal.invalid")


def _message(title: str, description: str, path: str, origin: Origin, source_spoke: str | None) -> str:
    trailers = [f"Spoke-File: {path}", f"Created-By: {origin.created_by}"]
    if source_spoke:
        trailers.append(f"Source-Spoke: {source_spoke}")
    trailers += [f"Eval-Id: {origin.eval_id}"] if origin.eval_id else []
    trailers += [f"Test-Id: {origin.test_id}"] if origin.test_id else []
    body = f"\n\n{description.strip()}" if description.strip() else ""
    return f"{title.strip()}{body}\n\n" + "\n".join(trailers) + "\n"
