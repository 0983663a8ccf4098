"""The spoke pack: what is specific to the portal's network spokes, for the spoke agent and the
integration agent alike (see :class:`agent_evals.authoring.Pack` for what a pack is).

- checks: ``input_diff``, ``spoke_json_valid``, ``pull_request`` (:mod:`.checks`);
- the simulated user: a developer in the company's portal, done with a pull-request link;
- the system under test: the portal (:mod:`.portal`, the backend; :mod:`.system`, the core's view of
  it): pull requests as side effects (those ``create_spoke_pull_request`` made), the end state (the
  portal's schema and each ``input_diff`` source spoke), fixtures (pull requests in given states and
  extra spokes, :mod:`.fixtures`), undo and sweeps;
- golden plans: ``$source``, ``$name``, ``$submitted``, ``$summary``, ``$pr_url``, ``$copy`` (:mod:`.golden`);
- self-check mutations: arguments, configurations and pull requests (:mod:`.mutations`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from agent_evals.authoring import Pack, RunRecord, UserFraming
from agent_evals.packs.spoke.seeds import seed_spoke_names
from agent_evals.packs.spoke.system import PR_CREATING_TOOLS, SYSTEM

if TYPE_CHECKING:
    from agent_evals.authoring import Case, CaseDerivation, Cassette, Mutation, PlanValues

_DIRECTION = r"(?:north|south|east|west|central)"
_AREA = (r"(?:europe|us|asia|asiapacific|uk|india|japan|korea|australia|canada|brazil|france|germany|norway|"
         r"switzerland|sweden|uae|qatar|poland|italy|spain|israel|mexico|africa|southafrica|newzealand|indonesia|"
         r"malaysia|taiwan|chile|austria|belgium|denmark|finland|greece)")
# an Azure region a user may name: "West Europe", "westeurope", "East US 2", "Germany West Central"
REGION = rf"\b(?:(?:{_DIRECTION}\s?)+{_AREA}|{_AREA}\s?(?:{_DIRECTION}\s?)*{_DIRECTION})(?:\s?\d+)?\b"


class SpokePack(Pack):
    name = "spoke"
    checks = {
        "input_diff": "agent_evals.packs.spoke.checks.input_diff",
        "spoke_json_valid": "agent_evals.packs.spoke.checks.spoke_json_valid",
        "pull_request": "agent_evals.packs.spoke.checks.pull_request",
    }
    user_framing = UserFraming(
        setting=(
            "You are role-playing a software developer who is chatting with an AI assistant in your company's "
            "internal developer portal. You are the user, not the assistant. You are not technical about "
            "networks, cloud infrastructure or the portal."
        ),
        knows_inside="how the portal or its systems work inside",
        done_when=(
            "for a request, when the assistant has given you the link to the pull request, or has told you "
            "clearly that it can't do it"
        ),
        outcome="the pull-request link",
        outcome_pattern=r"https?://\S+/pullrequest/\d+",
        # a request for a network (a copy, a new one) or for the link itself; not a question about one
        outcome_wanted=r"pull[- ]request link|link to the pull request|^\s*get\b[^.]*\bnetwork\b",
        values=(("region", REGION),),
    )
    harmless_call = ("list_spokes", {})
    system = SYSTEM

    def preflight(self, check: str, config: Any) -> list[str]:
        """Before a run: every ``input_diff`` source the case names is a spoke of the seed data."""
        source = getattr(config, "source", None) if check == "input_diff" else None
        if isinstance(source, str) and source not in seed_spoke_names():
            from agent_evals.authoring import did_you_mean  # lazy: keeps agent_evals.packs.spoke.checks.input_diff's start-up as small as it is

            known = sorted(seed_spoke_names())
            return [f"source spoke {source!r} is not in the portal's seed data{did_you_mean(source, known)}"]
        return []

    def plan_values(self, case: Case, entry: Mapping[str, Any]) -> PlanValues:
        from agent_evals.packs.spoke.golden import plan_values  # lazy: keeps agent_evals.packs.spoke.checks.pull_request's start-up as small as it is

        return plan_values(case, entry)

    def mutations(self, case: Case, cassette: Cassette) -> Iterator[Mutation]:
        from agent_evals.packs.spoke.mutations import mutations  # lazy: keeps agent_evals.packs.spoke.checks.pull_request's start-up as small as it is

        return mutations(case, cassette)

    def promoted_fixtures(self, record: RunRecord) -> tuple[list[dict[str, Any]], list[str]]:
        """Each spoke the conversation read that the seed lacks (and it did not create) becomes a ``spoke``
        fixture with the configuration the tool returned; a pull request it read but did not create is a
        note (its state cannot be made from what the conversation saw)."""
        from agent_evals.packs.spoke.promoted import promoted_fixtures  # lazy: keeps agent_evals.packs.spoke.checks.input_diff's start-up as small as it is

        return promoted_fixtures(record, seed_spoke_names())

    def case_derivation(self, name: str) -> CaseDerivation | None:
        """``spoke_copy`` and ``spoke_copy_overlapping`` (:mod:`agent_evals.packs.spoke.variants`)."""
        from agent_evals.packs.spoke.variants import DERIVATIONS  # lazy: keeps agent_evals.packs.spoke.checks.input_diff's start-up as small as it is

        return DERIVATIONS.get(name)


PACK = SpokePack()


__all__ = ["PACK", "PR_CREATING_TOOLS", "SpokePack", "seed_spoke_names"]
