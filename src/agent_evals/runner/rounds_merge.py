"""The rounds of ``--repeat-until-decided`` as one Promptfoo eval (``-o`` JSON for ``promptfoo import``).

Every round's rows, each test's rows numbered one after the other (``testIdx`` = the test's
position × MAX + its run; a test first run in a later round after the
others), prompts' metrics and stats added up (as :mod:`agent_evals.shards.merge` adds shards),
the first round's config with the rounds' stamp in ``config.metadata.agentEvalsRounds`` (the
runs each case took, what decided it), and a new eval id of Promptfoo's form.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agent_evals.shards.merge import merged_prompts, merged_stats, promptfoo_eval_id, results_document

STAMP_KEY = "agentEvalsRounds"
RUNS_PER_TEST = 1000


def merge_rounds(files: Sequence[Path], *, stamp: Mapping[str, Any]) -> dict[str, Any]:
    documents = [json.loads(path.read_text(encoding="utf-8")) for path in files]
    first = documents[0]
    per_test = int(stamp.get("max") or RUNS_PER_TEST)
    positions: dict[str, int] = {}
    runs: dict[tuple[str, int], int] = {}
    rows = []
    for document in documents:
        for row in sorted(document["results"]["results"], key=lambda r: (r["testIdx"], r.get("promptIdx", 0))):
            test = str((row.get("testCase") or {}).get("description") or row["testIdx"])
            position = positions.setdefault(test, len(positions))
            prompt = int(row.get("promptIdx") or 0)
            run = runs[(test, prompt)] = runs.get((test, prompt), -1) + 1
            rows.append({**row, "testIdx": position * per_test + run})
    rows.sort(key=lambda r: (r["testIdx"], r.get("promptIdx", 0)))
    created = str((first.get("metadata") or {}).get("evaluationCreatedAt") or first["results"].get("timestamp") or "")
    config = dict(first.get("config") or {})
    description = f"{config.get('description') or ''} · repeat until decided (at most {stamp.get('max')} runs)".strip(" ·")
    config["description"] = description
    config["metadata"] = {**(config.get("metadata") or {}), STAMP_KEY: dict(stamp)}
    config.pop("outputPath", None)
    results = {
        "version": 3,
        "timestamp": created,
        "prompts": merged_prompts(d["results"].get("prompts") or [] for d in documents),
        "results": rows,
    }
    if all(isinstance(d["results"].get("stats"), Mapping) for d in documents):
        results["stats"] = merged_stats(d["results"]["stats"] for d in documents)
    return results_document(promptfoo_eval_id(f"{description} {len(rows)}", created), results, config, documents)
