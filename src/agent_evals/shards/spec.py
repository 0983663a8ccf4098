"""The old name of :mod:`agent_evals.suites.shard_spec` (a shard's spec moved below the report and
the System protocol that read it), kept while the release pack (``packs/release/``, written on a
branch of its own) still imports it: remove this module once it imports ``agent_evals.suites.shard_spec``."""

from agent_evals.suites.shard_spec import Shard, ShardError, parse_shard

__all__ = ["Shard", "ShardError", "parse_shard"]
