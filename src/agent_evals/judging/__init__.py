"""The judge model's part in grading: questions about a conversation, verdicts, and the stage
that asks them in the provider's worker (see :mod:`agent_evals.judging.stage`)."""

from agent_evals.judging.stage import JudgeConfigError, JudgedCheck, ask_for_verdict, judge_conversation, judged_checks

__all__ = ["JudgeConfigError", "JudgedCheck", "ask_for_verdict", "judge_conversation", "judged_checks"]
