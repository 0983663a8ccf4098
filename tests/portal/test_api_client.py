"""The portal's REST client (``packs/spoke/portal/api.py``) stays small when imported.

The ``small-portal-client`` contract of pyproject.toml holds its own imports to the standard library and
``agent_evals.authoring``; the surface reaches the SDKs only through names it imports on first use, so
what a process importing the client loads is checked here, for real."""

from __future__ import annotations

import json
import subprocess
import sys

SDKS = ["httpx", "fastapi", "uvicorn", "pydantic", "openai", "mcp", "yaml"]


def test_importing_the_client_loads_no_web_framework_model_or_mcp_sdk() -> None:
    code = ("import json, sys\nimport agent_evals.packs.spoke.portal.api as api\n"
            f"print(json.dumps([m for m in {SDKS!r} if m in sys.modules]))\n"
            "print(issubclass(api.PortalError, __import__('agent_evals.authoring').authoring.SystemFailure))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == [json.dumps([]), "True"]
