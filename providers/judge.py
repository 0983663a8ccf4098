"""Promptfoo provider: the grader model for llm-rubric (see agent_evals.judge).

    defaultTest:
      options:
        provider: file://../../providers/judge.py
"""

from agent_evals.judge import call_api

__all__ = ["call_api"]
