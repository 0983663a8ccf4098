"""The self-check of the user checks: the golden conversations are clean, and each user-side
mutation of one is caught.

:func:`case_user` gives a golden case's user as the provider sees it (the brief with its
``$fixture`` values filled from the recording, the pack's framing, the simulated user's
prompt). :func:`user_mutations` makes broken copies of a golden cassette — the user stops
early, invents a fact, speaks as the assistant, leaks its instructions, repeats a message —
each consistent (the user model's replies and the recorded transcript change together), so it
replays for real, and each names the check that must catch it. A mutation that cannot apply
to a conversation (no second message to repeat, no point where the task was visibly
unfinished) is not made.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agent_evals.conversation.cassette import Cassette
from agent_evals.conversation.framing import UserFraming
from agent_evals.conversation.users import simulated_user_prompt
from agent_evals.record import UserCheck
from agent_evals.record.fixture_refs import fill_references
from agent_evals.user_checks import UserBrief
from agent_evals.user_checks.ended_early import ASKING, COURTESY, REFUSAL, WORKING
from agent_evals.user_checks.text import any_match, sentences, words
from agent_evals.conversation.cassette import load_cassette
from agent_evals.suites.discovery import discover
from agent_evals.suites.files import load_suite

if TYPE_CHECKING:
    from agent_evals.suites.discovery import Suite

INVENTED_NAME = "zephyr-qa-zz9"  # a name no brief and no reply of the golden conversations holds
ROLE_SWAP = "Sure! I'd be happy to help. How can I assist you today?"
LEAK = "According to my facts, that is everything you need."
EARLY_DONE = "Great, thanks, that's all! [DONE]"


@dataclass(frozen=True)
class CaseUser:
    """A case's simulated user as the provider sees it."""

    brief: UserBrief
    framing: UserFraming
    prompt: str


@dataclass(frozen=True)
class UserMutation:
    name: str
    must_find: UserCheck
    cassette: Cassette


def golden_users() -> list[tuple[Suite, Cassette, CaseUser | None]]:
    """Every golden conversation of every suite, with its user (None: fixed messages)."""
    from agent_evals.golden.record import suite_pack  # lazy: loads pydantic only when used (start-up time)

    out = []
    for suite in discover():
        framing = suite_pack(suite).user_framing
        tests = {t.case_id: t for t in load_suite(suite).tests}
        for path in sorted((suite.folder / "golden").glob("*.json")):
            cassette = load_cassette(path)
            out.append((suite, cassette, case_user(tests[cassette.case_id].vars.get("simulated_user"), cassette, framing)))
    return out


def case_user(spec: Mapping[str, Any] | None, cassette: Cassette, framing: UserFraming) -> CaseUser | None:
    """The user of a golden case (``vars.simulated_user``), None for fixed messages."""
    if not spec:
        return None
    filled = fill_references(dict(spec), cassette.record.fixtures)
    brief = UserBrief(
        goal=str(filled.get("goal") or ""), persona=str(filled.get("persona") or ""), facts=filled.get("facts"),
        instructions=str(filled.get("instructions") or ""), params=dict(filled.get("params") or {}),
    )
    prompt = "" if not brief.goal else simulated_user_prompt(
        brief.goal, brief.persona, brief.facts, brief.instructions, framing
    )
    return CaseUser(brief, framing, prompt)


class _Tape:
    """A mutable copy of a cassette: the user model's replies and the recorded transcript edited together."""

    def __init__(self, cassette: Cassette) -> None:
        self.data = copy.deepcopy(cassette.to_dict())
        self.data["record"].pop("user_review", None)  # the replay checks the user anew

    @property
    def record(self) -> dict[str, Any]:
        return self.data["record"]

    def user_calls(self) -> list[dict[str, Any]]:
        return [c for c in self.data["model_calls"] if c["role"] == "user"]

    def turns(self) -> int:
        return max((e["turn"] for e in self.record["transcript"]), default=0)

    def user_text(self, turn: int) -> str:
        return next(e["content"] for e in self.record["transcript"] if e["role"] == "user" and e["turn"] == turn)

    def reply(self, turn: int) -> str:
        return next((e["content"] for e in self.record["transcript"] if e["role"] == "assistant" and e["turn"] == turn), "")

    def say(self, turn: int, text: str) -> None:
        """The user's message of ``turn`` becomes ``text``."""
        self.user_calls()[turn - 1]["response"]["content"] = text
        for entry in self.record["transcript"]:
            if entry["role"] == "user" and entry["turn"] == turn:
                entry["content"] = text

    def stop_after(self, turn: int, text: str) -> None:
        """The user stops (``text`` holds its stop marker) after the assistant's reply of ``turn``."""
        calls, kept, seen_users = self.data["model_calls"], [], 0
        for call in calls:
            if call["role"] == "user":
                seen_users += 1
                if seen_users == turn + 1:
                    call = copy.deepcopy(call)
                    call["response"]["content"] = text
                    kept.append(call)
                    break
            kept.append(call)
        self.data["model_calls"] = kept
        record = self.record
        record["transcript"] = [e for e in record["transcript"] if e["turn"] <= turn]
        made = [c for c in record["tool_calls"] if c["turn"] <= turn]
        record["tool_calls"] = made
        said = json.dumps(made, ensure_ascii=False)  # a side effect of a kept call is named by it (link, else id)
        record["side_effects"] = [s for s in record["side_effects"] if (s.get("url") or s["id"]) in said]
        record["conversation_end"], record["ended_by"] = "done", "user"

    def done(self) -> Cassette:
        return Cassette.from_dict(self.data, where="mutated cassette")


def user_mutations(cassette: Cassette, user: CaseUser) -> Iterator[UserMutation]:
    """The user-side broken copies of one golden cassette (see the module docstring)."""
    tape = _Tape(cassette)
    turns = tape.turns()
    if turns == 0 or len(tape.user_calls()) < turns:
        return
    early = _unfinished_turn(tape, user)
    if early is not None:
        copy_ = _Tape(cassette)
        copy_.stop_after(early, EARLY_DONE)
        yield UserMutation("early done", "ended_early", copy_.done())
    if user.brief.has_facts:
        copy_ = _Tape(cassette)
        copy_.say(1, f"{copy_.user_text(1)} Please use the name {INVENTED_NAME} for it.")
        yield UserMutation("invented fact", "invented_fact", copy_.done())
    copy_ = _Tape(cassette)
    copy_.say(turns, ROLE_SWAP)
    yield UserMutation("role swap", "role_confusion", copy_.done())
    copy_ = _Tape(cassette)
    copy_.say(1, f"{copy_.user_text(1)} {LEAK}")
    yield UserMutation("leaked instruction", "leaked_instructions", copy_.done())
    if turns >= 2 and len(words(tape.user_text(1))) >= 5:
        copy_ = _Tape(cassette)
        copy_.say(turns, copy_.user_text(1))
        yield UserMutation("repeated message", "repeated_message", copy_.done())


def _unfinished_turn(tape: _Tape, user: CaseUser) -> int | None:
    """The first turn whose reply still asks or works, before the goal's outcome was given (when the
    goal wants it): a user stopping there stops visibly too early."""
    framing = user.framing
    wanted = bool(framing.outcome_pattern) and (
        not framing.outcome_wanted or re.search(framing.outcome_wanted, user.brief.goal, re.IGNORECASE) is not None
    )
    for turn in range(1, tape.turns() + 1):
        reply = tape.reply(turn)
        if framing.outcome_pattern and re.search(framing.outcome_pattern, reply):
            return None
        tail = " ".join(sentences(reply)[-2:])
        if REFUSAL.search(reply):
            continue
        asking = any(any_match(ASKING, s) and not COURTESY.search(s) for s in sentences(tail))
        if any_match(WORKING, tail) or (asking and wanted):
            return turn
    return None
