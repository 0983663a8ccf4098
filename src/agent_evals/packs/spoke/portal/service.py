"""The portal's operations, shared by the MCP tools, the REST API and the HTML page.

``Portal`` is the one object the adapters talk to. It raises ``CallerError``
subclasses for what the caller got wrong (unknown spoke, bad name, conflict) and
returns the pydantic models of ``models.py``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent_evals.packs.spoke.portal.datadir import DB_FILE, REPO_DIR, ensure_data_dir
from agent_evals.packs.spoke.portal.docsearch import DocIndex
from agent_evals.packs.spoke.portal.errors import InvalidInputError, NotFoundError
from agent_evals.packs.spoke.portal.fixtures import FixtureSpokes
from agent_evals.packs.spoke.portal.gitrepo import GitRepo
from agent_evals.packs.spoke.portal.models import (
    ENVIRONMENTS,
    PULL_REQUEST_STATUSES,
    PullRequest,
    PullRequestList,
    SchemaInfo,
    SpokeDetail,
    SpokeList,
    SpokeSummary,
    ValidationResult,
)
from agent_evals.packs.spoke.portal.names import check_spoke_name, spoke_file
from agent_evals.packs.spoke.portal.prstore import PullRequestRecord, PullRequestStore
from agent_evals.packs.spoke.portal.pullrequests import Origin, PullRequestWorkflow
from agent_evals.packs.spoke.portal.rules import ALLOWED_LOCATIONS
from agent_evals.packs.spoke.portal.schema import load_spoke_schema
from agent_evals.packs.spoke.portal.settings import PortalSettings
from agent_evals.packs.spoke.portal.snapshot import MainReader
from agent_evals.packs.spoke.portal.validation import SpokeValidator

log = logging.getLogger(__name__)
MAX_TITLE = 200
FIXTURE_CREATED_BY = "fixture"  # the created_by of pull requests a test case asked for (not the agent)
MAX_DESCRIPTION = 8000


class Portal:
    """The portal over one data dir. ``public_url`` is the base of PR links."""

    def __init__(
        self,
        data_dir: Path,
        settings: PortalSettings | None = None,
        public_url: str = "http://127.0.0.1:8400",
    ) -> None:
        self.data_dir = ensure_data_dir(data_dir)
        self.settings = settings or PortalSettings()
        self.public_url = public_url.rstrip("/")
        self.repo = GitRepo(self.data_dir / REPO_DIR)
        self.store = PullRequestStore(self.data_dir / DB_FILE)
        self.main = MainReader(self.repo)
        self.validator = SpokeValidator(self.settings)
        self.workflow = PullRequestWorkflow(self.repo, self.store, self.main, self.validator)
        self.fixture_spokes = FixtureSpokes(self.repo, self.store, self.main, self.validator, self.workflow)
        self.docs = DocIndex.load()
        self.workflow.reconcile()

    def close(self) -> None:
        self.store.close()

    # --- spokes -------------------------------------------------------------------------------

    def spoke_count(self) -> int:
        return len(self.main.current().spokes)

    def list_spokes(self, environment: str | None = None, location: str | None = None) -> SpokeList:
        if environment is not None and environment not in ENVIRONMENTS:
            raise InvalidInputError(
                f"unknown environment {environment!r}; allowed: {', '.join(ENVIRONMENTS)}"
            )
        wanted_location = _location(location)
        spokes = [
            _summary(stem, config)
            for stem, config in self.main.current().spokes.items()
            if (environment is None or config.get("environment") == environment)
            and (wanted_location is None or config.get("location") == wanted_location)
        ]
        return SpokeList(spokes=spokes)

    def get_spoke(self, name: str) -> SpokeDetail:
        stem = check_spoke_name(name)
        config = self.main.current().spokes.get(stem)
        if config is None:
            raise NotFoundError(
                f"unknown spoke {stem!r}: there is no {spoke_file(stem)} on main "
                "(list_spokes shows the existing ones)"
            )
        return SpokeDetail(name=stem, file=spoke_file(stem), config=dict(config))

    def schema_info(self) -> SchemaInfo:
        rule = self.settings.file_name_rule
        return SchemaInfo.model_validate(
            {
                "schema": load_spoke_schema(),
                "additional_schema": self.settings.additional_schema,
                "file_name_rules": rule.as_dict() if rule else None,
            }
        )

    def validate(self, config: object, spoke_name: str | None = None) -> ValidationResult:
        if spoke_name is not None:
            check_spoke_name(spoke_name)
        main = self.main.current()
        return self.validator.validate(config, hub=main.hub, spokes=main.spokes, spoke_name=spoke_name)

    # --- pull requests --------------------------------------------------------------------------

    def create_pull_request(
        self,
        spoke_name: str,
        config: Mapping[str, Any],
        title: str,
        description: str,
        source_spoke: str | None = None,
        origin: Origin | None = None,
    ) -> PullRequest:
        check_spoke_name(spoke_name)
        if source_spoke is not None:
            self.get_spoke(source_spoke)  # must exist on main
        if not title.strip() or len(title) > MAX_TITLE:
            raise InvalidInputError(f"the title must be 1-{MAX_TITLE} characters")
        if len(description) > MAX_DESCRIPTION:
            raise InvalidInputError(f"the description must be at most {MAX_DESCRIPTION} characters")
        plain_text("title", title.strip(), one_line=True)
        plain_text("description", description, one_line=False)
        origin = origin or Origin()
        record = self.workflow.create(spoke_name, config, title.strip(), description, origin, source_spoke)
        return self.to_model(record)

    def get_pull_request(self, pr_id: int, *, with_diff: bool = True) -> PullRequest:
        record = self.workflow.get(pr_id)
        return self.to_model(record, diff=self.workflow.diff(record) if with_diff else None)

    def list_pull_requests(
        self, status: str | None = None, eval_id: str | None = None, test_id: str | None = None,
        *, with_diff: bool = False,
    ) -> PullRequestList:
        if status is not None and status not in PULL_REQUEST_STATUSES:
            raise InvalidInputError(f"unknown status {status!r}; allowed: {', '.join(PULL_REQUEST_STATUSES)}")
        records = self.store.list(status=status, eval_id=eval_id, test_id=test_id)
        return PullRequestList(
            pull_requests=[self.to_model(r, diff=self.workflow.diff(r) if with_diff else None) for r in records]
        )

    def abandon_pull_request(self, pr_id: int) -> PullRequest:
        return self.to_model(self.workflow.abandon(pr_id))

    def complete_pull_request(self, pr_id: int) -> PullRequest:
        return self.to_model(self.workflow.complete(pr_id))

    # --- fixtures: what a test case relies on, created before its conversation ------------------

    def create_fixture_pull_request(
        self, spoke_name: str, config: Mapping[str, Any], title: str, description: str,
        source_spoke: str | None, origin: Origin, status: str = "active",
    ) -> PullRequest:
        """A pull request made for a test case (``created_by`` = ``fixture``), validated for real,
        then abandoned when ``status`` asks for it."""
        if status not in ("active", "abandoned"):
            raise InvalidInputError(f"a fixture pull request is active or abandoned, not {status!r}")
        origin = Origin(created_by=FIXTURE_CREATED_BY, eval_id=origin.eval_id, test_id=origin.test_id)
        pr = self.create_pull_request(spoke_name, config, title, description, source_spoke, origin)
        return self.abandon_pull_request(pr.id) if status == "abandoned" else pr

    def remove_fixtures(self, *, eval_id: str | None = None, test_id: str | None = None) -> dict[str, list[Any]]:
        """Remove the fixture spokes and abandon the active fixture pull requests of an eval or a test."""
        spokes = self.fixture_spokes.remove_all(eval_id=eval_id, test_id=test_id)
        abandoned = [
            self.abandon_pull_request(r.id).id
            for r in self.store.list(status="active", eval_id=eval_id, test_id=test_id)
            if r.created_by == FIXTURE_CREATED_BY
        ]
        return {"removed": [f"spoke {name}" for name in spokes], "abandoned": abandoned}

    def pull_request_url(self, pr_id: int) -> str:
        return f"{self.public_url}/repos/spokes/pullrequest/{pr_id}"

    def to_model(self, record: PullRequestRecord, diff: str | None = None) -> PullRequest:
        return PullRequest(
            id=record.id,
            url=self.pull_request_url(record.id),
            title=record.title,
            description=record.description,
            spoke_name=record.spoke_name,
            file=record.file,
            source_branch=record.source_branch,
            target_branch=record.target_branch,
            status=record.status,
            created_at=record.created_at,
            created_by=record.created_by,
            eval_id=record.eval_id,
            test_id=record.test_id,
            validation_status=record.validation_status,
            validation_errors=list(record.validation_errors),
            diff=diff,
        )


def _location(location: str | None) -> str | None:
    """Normalise a location filter ("West Europe" -> "westeurope") and check it."""
    if location is None:
        return None
    normalised = location.replace(" ", "").lower()
    if normalised not in ALLOWED_LOCATIONS:
        raise InvalidInputError(f"unknown location {location!r}; allowed: {', '.join(ALLOWED_LOCATIONS)}")
    return normalised


def _summary(stem: str, config: Mapping[str, Any]) -> SpokeSummary:
    tags, private_link = _mapping(config.get("tags")), _mapping(config.get("privateLink"))
    space = config.get("addressSpace")
    return SpokeSummary(
        name=stem,
        file=spoke_file(stem),
        environment=str(config.get("environment", "")),
        location=str(config.get("location", "")),
        address_space=[str(c) for c in space] if isinstance(space, list) else [],
        application=tags.get("application"),
        owner=tags.get("owner"),
        cost_center=tags.get("costCenter"),
        private_link=private_link.get("enabled") is True,
    )


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def plain_text(field: str, value: str, *, one_line: bool) -> None:
    """A title or description is plain text: no control character (a NUL byte cannot even be stored
    in a git commit), and a title no line break; raises InvalidInputError naming the character and
    where it is."""
    allowed = "\t" if one_line else "\t\n\r"
    for position, char in enumerate(value, 1):
        if (ord(char) < 32 or ord(char) == 127) and char not in allowed:
            what = "a line break" if char in "\n\r" else "a NUL byte" if char == "\0" else "a control character"
            raise InvalidInputError(
                f"the {field} contains {what} ({char!r}) at character {position}; "
                f"write it as plain text{' on one line' if one_line else ''}"
            )
