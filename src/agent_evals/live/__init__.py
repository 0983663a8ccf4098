"""Live evaluation: the agents' real conversations, stored, traced, sampled, scored with the same
checks as the evaluations, and turned into cases (``docs/live.md``).

The portal's side:

* ``stored`` — :class:`StoredConversation`: the run record, the history, the times, the rating;
* ``store`` (one interface), ``store_sql`` (its SQL), ``store_sqlite``, ``store_postgres`` (the two
  backends), ``store_holder`` (opened on first use);
* ``turns`` — one chat turn written into a stored conversation (secrets scrubbed);
* ``routes`` — the stored conversations over REST (read, sample, rate, delete a user's);
* ``telemetry`` — OpenTelemetry GenAI spans of the chat path (OTLP, Azure Monitor).

``agent-evals live`` (``command``) and ``agent-evals live promote`` (``promote``):

* ``sampling`` — which conversations: window, agent, count or rate, seed, strata;
* ``sources`` — reading them from the portal or from files; ``otlp_import`` — from OTLP/JSON traces;
* ``policy`` — the live policy file and its preflight; ``scoring`` — one conversation scored;
  ``parallel`` — the sample scored in worker processes;
* ``eval_file`` — the Promptfoo eval; ``live_report`` — the report; ``thresholds`` — the alert;
* ``promote_case`` — the case and golden plan entry of a promoted conversation; ``brief`` — the
  judge's simulated-user brief.

Nothing here knows a domain: what is domain-specific (the checks of submitted configurations,
the pull requests, the fixtures of a promoted case) comes through the pack.
"""
