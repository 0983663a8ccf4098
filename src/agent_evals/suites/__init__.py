"""The suites on disk and what a run reads from them, below everything that runs them.

``discovery``       the suites found (``evals/<name>/promptfooconfig.yaml``), selected by name
``files``           a suite's files read (its config, tests, providers, prompts), with positions
``promptfoo_args``  Promptfoo's flags a run passes on, read once
``shard_spec``      a shard of a run (``--shard I/N``) and the files it tags
``manifest``        a run's folder and its manifest (``runs/<id>/manifest.json``)
``problems``        a problem found before a run: where, what, and a near name
"""
