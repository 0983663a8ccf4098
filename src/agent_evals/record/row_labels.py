"""The words the kit writes into Promptfoo's rows and reads back (standard library only).

The provider, the checks, the suites' hook (``hooks/kit.js``, through
``hooks/policy.generated.json``), the runner's terminal and the report all spell them the
same way because they all take them from here (:mod:`agent_evals.hook_policy` writes them
out for the hook).
"""

from __future__ import annotations

import re

#: A case id leading a test's description (``C01 the first case`` → ``C01``), when the test's
#: metadata names none. Written so that Python's ``re`` and JavaScript's ``RegExp`` read it alike.
CASE_ID_PATTERN = r"^\s*([A-Za-z]+\d+)\b"
#: The start of the reason of a check that was not graded: neither a pass nor a fail.
NOT_GRADED = "NOT GRADED"
#: The end of a not-graded entry of a check of weight 0, which decides nothing.
INFORMATIVE = "(informative, weight 0)"
#: The start of the line the hook prints for each finished case (then its JSON), read by the runner.
CASE_LINE_MARKER = "@@agent-evals "

_CASE_ID = re.compile(CASE_ID_PATTERN)


def leading_case_id(description: object) -> str | None:
    """``C01`` for ``"C01 the first case"``; None when the description starts with no case id."""
    match = _CASE_ID.match(str(description or ""))
    return match.group(1) if match else None
