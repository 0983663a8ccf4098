"""Sharded runs: one run's cases split over machines (or processes), put back together as one eval.

- :mod:`.plan` — which cases each shard runs (pure, deterministic; by count or by durations);
- :mod:`.durations` — case times from a stored report (``--shard-durations``);
- :mod:`.selection` — the ``promptfoo eval`` flags that run exactly a shard's tests;
- :mod:`.stamp` — what a shard's results file says about its shard;
- :mod:`.merge` — shards' results files into one Promptfoo eval.

``--shard I/N`` and the results file names (``x.shard-2-of-4.json``) are
:mod:`agent_evals.suites.shard_spec`; ``agent-evals merge`` is :mod:`agent_evals.runner.merge_command`.
The runner's side (portal, data dir, results database per shard) is
:mod:`agent_evals.runner.sharding`; the report reads the stamps (:mod:`agent_evals.report.shard_info`).
See ``docs/scale.md``.
"""
