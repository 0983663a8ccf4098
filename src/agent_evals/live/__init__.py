"""Live evaluation: the agents' real conversations, stored, traced, sampled, scored with the same
checks as the evaluations, and turned into cases (``docs/live.md``).

* ``stored``, ``store`` (+ ``store_sql``, ``store_sqlite``, ``store_postgres``, ``store_holder``) — the
  conversations the portal's chat keeps, in SQLite or PostgreSQL;
* ``turns`` — one chat turn written into a stored conversation (secrets scrubbed);
* ``routes`` — the stored conversations over REST (read, sample, rate, delete a user's);
* ``telemetry`` — OpenTelemetry GenAI spans of the chat path (OTLP, Azure Monitor);
* ``sampling`` — which conversations to score: window, agent, count or rate, seed, strata;
* ``agent-evals live`` and ``agent-evals live promote``: see ``agent_evals.live.command``.

Nothing here knows a domain: what is domain-specific (the checks of submitted configurations,
the pull requests, the fixtures of a promoted case) comes through the pack.
"""
