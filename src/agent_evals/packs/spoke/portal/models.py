"""Typed values the portal returns over MCP and REST (pydantic, so tools get structured output).

Closed vocabularies are ``Literal`` types with a ``*_VALUES`` tuple beside them for
runtime checks. Field descriptions are part of the MCP output schema an agent reads.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

Environment = Literal["dev", "test", "prod"]
PullRequestStatus = Literal["active", "abandoned", "completed"]
ValidationStatus = Literal["succeeded", "failed"]
RuleId = Literal[
    "schema",
    "additional-schema",
    "file-name-rule",
    "name-matches-file",
    "unique-name",
    "allowed-location",
    "cidr",
    "private-address-space",
    "address-space-self-overlap",
    "address-space-overlap-hub",
    "address-space-overlap-spoke",
    "subnet-in-address-space",
    "subnet-overlap",
    "subnet-name-unique",
    "nsg-port-range",
    "nsg-priority-unique",
    "management-port-exposed",
    "prod-private-link",
    "private-dns-zones",
    "hub-name",
    "peering-gateway-transit",
]
ENVIRONMENTS: tuple[Environment, ...] = get_args(Environment)
PULL_REQUEST_STATUSES: tuple[PullRequestStatus, ...] = get_args(PullRequestStatus)
RULE_IDS: tuple[RuleId, ...] = get_args(RuleId)


class Issue(BaseModel):
    """One validation error: where, what, and which rule found it."""

    model_config = ConfigDict(frozen=True)

    path: str = Field(description="JSON pointer into the configuration, e.g. /subnets/1/addressPrefix")
    message: str = Field(description="What is wrong and how to fix it")
    rule: RuleId = Field(description="Identifier of the rule that failed, e.g. subnet-overlap")


class ValidationResult(BaseModel):
    valid: bool = Field(description="True when the configuration passed every check")
    errors: list[Issue] = Field(description="Every problem found; empty when valid")


class SpokeSummary(BaseModel):
    name: str = Field(description="Spoke name (the file stem)")
    file: str = Field(description="Path of the spoke's file in the repository")
    environment: str = Field(description="dev, test or prod")
    location: str = Field(description="Azure region")
    address_space: list[str] = Field(description="CIDR ranges of the spoke's virtual network")
    application: str | None = Field(description="Application tag")
    owner: str | None = Field(description="Owner tag")
    cost_center: str | None = Field(description="Cost centre tag")
    private_link: bool = Field(description="Whether private link is enabled")


class SpokeList(BaseModel):
    spokes: list[SpokeSummary] = Field(description="Spokes on the main branch, sorted by name")


class SpokeDetail(BaseModel):
    name: str = Field(description="Spoke name (the file stem)")
    file: str = Field(description="Path of the spoke's file in the repository")
    config: dict[str, Any] = Field(description="The spoke configuration as stored on main")


class SchemaInfo(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    spoke_schema: dict[str, Any] = Field(alias="schema", description="JSON schema of a spoke configuration")
    additional_schema: dict[str, Any] | None = Field(
        description="Extra JSON schema from the customer settings that every configuration must also satisfy"
    )
    file_name_rules: dict[str, Any] | None = Field(
        description="Customer rule for spoke file names: {pattern, description, examples}"
    )


class PullRequest(BaseModel):
    id: int = Field(description="Pull request number")
    url: str = Field(description="Link to the pull request page; report this to the user")
    title: str
    description: str
    spoke_name: str = Field(description="Spoke added or changed by the pull request")
    file: str = Field(description="Repository path of the spoke file")
    source_branch: str
    target_branch: str
    status: PullRequestStatus
    created_at: str = Field(description="Creation time, ISO 8601 UTC")
    created_by: str
    eval_id: str | None
    test_id: str | None
    validation_status: ValidationStatus = Field(description="Result of the PR validation gate")
    validation_errors: list[Issue] = Field(description="Errors found by the validation gate")
    diff: str | None = Field(default=None, description="Unified diff of the change")


class PullRequestList(BaseModel):
    pull_requests: list[PullRequest] = Field(description="Pull requests, newest first")


class DocHit(BaseModel):
    id: str = Field(description="Document id for get_doc")
    title: str
    snippet: str = Field(description="The passage that matched best")
    score: float = Field(description="Keyword relevance; higher is better")


class DocSearchResult(BaseModel):
    query: str
    results: list[DocHit] = Field(description="Matching documents, best first")


class DocPage(BaseModel):
    id: str
    title: str
    content: str = Field(description="The whole document in markdown")
