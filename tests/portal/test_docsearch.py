"""The shipped documentation: search ranking, reading, and consistency with the validator."""

from __future__ import annotations

import re

import pytest

from agent_evals.packs.spoke.portal.docsearch import DocIndex, words
from agent_evals.packs.spoke.portal.errors import InvalidInputError, NotFoundError
from agent_evals.packs.spoke.portal.models import RULE_IDS
from agent_evals.packs.spoke.portal.rules import ALLOWED_LOCATIONS

DOCS = DocIndex.load()


def test_the_five_topics_are_shipped() -> None:
    assert set(DOCS.docs) == {
        "spoke-resources",
        "new-spoke-workflow",
        "private-link-and-nsg",
        "validation-gate",
        "naming-and-address-plan",
    }


@pytest.mark.parametrize(
    ("query", "best"),
    [
        ("which azure resources does a spoke deployment create", "spoke-resources"),
        ("route table firewall", "spoke-resources"),
        ("how do I request a new spoke", "new-spoke-workflow"),
        ("private link prod", "private-link-and-nsg"),
        ("SSH from the internet", "private-link-and-nsg"),
        ("who completes pull requests", "validation-gate"),
        ("free address range for a new application", "naming-and-address-plan"),
        ("region code naming convention", "naming-and-address-plan"),
    ],
)
def test_search_ranks_the_right_page_first(query: str, best: str) -> None:
    hits = DOCS.search(query)
    assert hits[0].id == best, [(h.id, h.score) for h in hits]
    assert hits == DOCS.search(query)  # deterministic
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_snippet_is_the_matching_passage() -> None:
    (hit, *_) = DOCS.search("who completes pull requests", limit=1)
    assert hit.snippet.startswith("Who completes pull requests: Only administrators")
    assert len(hit.snippet) <= 250


def test_no_match_is_an_empty_list_and_bad_queries_are_errors() -> None:
    assert DOCS.search("kubernetes helm") == []
    with pytest.raises(InvalidInputError, match="no searchable words"):
        DOCS.search("the of and ?")
    with pytest.raises(InvalidInputError, match="limit must be between 1 and 20"):
        DOCS.search("spoke", limit=0)


def test_limit() -> None:
    assert len(DOCS.search("spoke", limit=2)) == 2


def test_get_doc_and_unknown_doc() -> None:
    page = DOCS.get("validation-gate")
    assert page.title == "The pull request validation gate"
    assert page.content.startswith("# The pull request validation gate")
    with pytest.raises(NotFoundError, match="unknown document 'nope'; available: naming-and-address-plan"):
        DOCS.get("nope")


def test_words_folds_plurals_and_drops_stop_words() -> None:
    assert words("The spokes and their Subnets, policies; 22 ports") == [
        "spoke",
        "subnet",
        "policy",
        "22",
        "port",
    ]


def test_docs_name_exactly_the_rules_the_validator_has() -> None:
    gate = DOCS.get("validation-gate").content
    listed = set(re.findall(r"`([a-z-]+)`", gate))
    assert set(RULE_IDS) <= listed, set(RULE_IDS) - listed
    mentioned = {r for doc in DOCS.docs.values() for r in re.findall(r"\(rules? `([a-z-]+)`", doc.content)}
    assert mentioned and mentioned <= set(RULE_IDS), mentioned - set(RULE_IDS)


def test_docs_agree_with_the_validator_on_regions_and_hub() -> None:
    gate = DOCS.get("validation-gate").content
    assert all(region in gate for region in ALLOWED_LOCATIONS)
    assert "hub-weu" in gate and "10.0.0.0/16" in gate
