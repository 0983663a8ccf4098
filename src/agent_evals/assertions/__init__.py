"""Pure matchers and metrics behind the Promptfoo assertion files in ``assertions/``.

One module per assertion (``tool_sequence``, ``tool_not_executed``, ``argument_match``,
``input_diff``, ``spoke_json_valid``, ``pull_request``, ``function_call_metrics``,
``conversation``), each exposing ``grade(config, metadata) -> GradingResult``; the
files in ``assertions/`` call it through `grade_from_context`. Helpers: ``names``
(globs), ``values`` (value comparison), ``json_pointer``, ``leaf_diff``, ``metrics``.

Every assertion runs in a fresh Python process, so this package imports only the
standard library at import time (jsonschema and the REST client are imported where used).
"""

from agent_evals.assertions._context import grade_from_context, grader
from agent_evals.assertions._result import GradingResult, make_result

__all__ = ["GradingResult", "grade_from_context", "grader", "make_result"]
