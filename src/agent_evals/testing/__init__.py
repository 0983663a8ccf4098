"""Test support shipped with the kit (stdlib only).

* :mod:`agent_evals.testing.scripted_openai` — ``ScriptedOpenAIServer``, a local
  OpenAI-compatible (and Azure-path) HTTP server answering from a script, with
  ``Reply``, ``ChatRequest``, ``QueueResponder`` and ``fixed_latency``.
"""
