"""Pure matchers and metrics behind the Promptfoo assertion files in ``assertions/``.

One module per core check (``tool_sequence``, ``tool_not_executed``, ``argument_match``,
``function_call_metrics``, ``conversation``, ``reply_contains``, ``reply_grounded``; a domain
pack's checks live in its pack, see :mod:`agent_evals.assertions.registry`), each exposing ``grade(config, metadata) -> GradingResult``; the
files in ``assertions/`` call it through `grade_from_context`. Helpers: ``names``
(globs), ``values`` (value comparison), ``json_pointer``, ``leaf_diff``, ``metrics``.

Every assertion runs in a fresh Python process, so this package imports only the
standard library at import time (jsonschema and the REST client are imported where used).
"""

from agent_evals.assertions._context import grade_from_context, grader
from agent_evals.assertions._result import GradingResult, make_result

__all__ = ["GradingResult", "grade_from_context", "grader", "make_result"]
