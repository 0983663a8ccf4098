"""A case's fixtures: what it relies on, made by the suite's system before its conversation.

The system says what a fixture is and makes it (:meth:`agent_evals.system.Conversation.create_fixtures`)
tagged with the case's trace, so the cleanup hook and the run's sweep find it too; the core records
them in the run record (``fixtures``), lets the user's messages name their values
(``$fixture.<key>.<field>``, e.g. ``$fixture.failing.url``), and has the system remove them once the
end state is read (:meth:`~agent_evals.system.Conversation.undo`).
"""

from __future__ import annotations

from agent_evals.record.fixture_refs import fill_references, references

__all__ = ["fill_references", "references"]
