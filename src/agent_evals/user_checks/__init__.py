"""The checks of the simulated user: a simulator's mistake is never counted as the agent's failure.

:func:`review` reads a finished conversation (the run record) and the user's brief (its
goal, persona, facts, instructions; a custom simulator's params) and says whether the user
spoiled it: it ended too early, invented a fact, talked as the assistant, leaked its
instructions, or sent an empty, repeated or off-goal message. Each finding names the turn
and the evidence. A row with a finding is **invalid** (kind ``user_simulator``): neither a
pass nor a fail. Pure and cheap: standard library and the run record only (docs/user-checks.md).
"""

from agent_evals.user_checks.base import Conversation, JudgeQuestion, Outcome
from agent_evals.user_checks.brief import UserBrief
from agent_evals.user_checks.review import FIXED, Review, review, with_judged

__all__ = ["FIXED", "Conversation", "JudgeQuestion", "Outcome", "Review", "UserBrief", "review", "with_judged"]
