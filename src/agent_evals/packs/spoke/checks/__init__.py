"""The spoke pack's checks: ``input_diff``, ``spoke_json_valid``, ``pull_request`` (and ``submission``,
which of the agent's calls carried the configuration). Each exposes ``parse_config`` and ``grade``
like the core's checks in :mod:`agent_evals.assertions`."""
