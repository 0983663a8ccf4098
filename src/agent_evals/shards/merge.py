"""Shards' results files into one Promptfoo eval (``-o`` JSON that ``promptfoo import`` takes).

:func:`check_shards` takes the files of one suite's sharded run and refuses what cannot be one
eval (another suite, another config, a shard given twice), naming the file; it says which
planned shards are missing. :func:`merge_shards` writes the merged eval:

- **rows re-indexed**: each shard numbers its tests from 0; a row's ``testIdx`` becomes
  ``position × repeat + repeat index``, its case's position in the whole selection (the
  unsharded run's numbering), found from its test's description and the plan (a row the plan
  does not give its shard is refused); rows are written by test and prompt index;
- **stats and metrics summed**: ``stats`` (successes, failures, errors, token usage; the
  duration is the longest shard's) and each prompt's ``metrics`` (counts, scores, named
  scores and their counts and weights, tokens, latency, cost);
- the first shard's config, with the description saying what was merged and the merged stamp
  in ``config.metadata.agentEvals`` (``agent-evals/merged@1``: the suite, the shards held, the
  plan), which the report reads, also from the viewer's database;
- a new eval id of Promptfoo's form, the same for the same shards, created at the first shard's
  start; traces concatenated.

Rows are never parsed: their text is copied (:func:`agent_evals.report.json_rows.split_raw_rows`),
only ``testIdx`` is rewritten, so 1,000 rows merge in well under two seconds.
"""

from __future__ import annotations

import hashlib
import json
import re
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent_evals.suites.shard_spec import ShardError
from agent_evals.shards.stamp import ShardStamp, shard_stamp

MERGED_FORMAT = "agent-evals/merged@1"
_TEST_IDX = re.compile(rb'\n        "testIdx": (\d+)')
_PROMPT_IDX = re.compile(rb'\n        "promptIdx": (\d+)')
_TEST_CASE = b'\n        "testCase": {'
_ROW_KEY = b'\n        "'
_DESCRIPTION = re.compile(rb'\n          "description": ("(?:[^"\\]|\\.)*")')
_ROWS = "\x00rows\x00"
_LONGEST = ("durationMs", "evaluationDurationMs", "generationDurationMs")
_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


@dataclass(frozen=True)
class ShardFile:
    path: Path
    stamp: ShardStamp


@dataclass(frozen=True)
class MergePlan:
    """One suite's shards, checked: those present and those the plan expects that are not."""

    suite: str
    files: tuple[ShardFile, ...]  # by shard
    missing: tuple[int, ...]

    @property
    def stamp(self) -> ShardStamp:
        return self.files[0].stamp

    def missing_cases(self) -> list[str]:
        plan = self.stamp.plan
        return [self.stamp.selected[p].id for n in self.missing for p in plan[n - 1]]


@dataclass
class Merged:
    eval_id: str
    path: Path
    rows: int
    shards: tuple[int, ...]
    missing: tuple[int, ...] = field(default_factory=tuple)


def read_shard_files(paths: Iterable[Path]) -> list[ShardFile]:
    """Every file's stamp (only the first lines are read); a file without one is refused."""
    return [ShardFile(Path(path), shard_stamp(Path(path))) for path in paths]


def check_shards(files: Sequence[ShardFile]) -> MergePlan:
    """The files as one suite's sharded run, or a one-line :class:`ShardError`."""
    if not files:
        raise ShardError("merge: no results file given")
    suites = sorted({f.stamp.suite for f in files})
    if len(suites) > 1:
        raise ShardError(
            f"merge: the files are of different suites ({', '.join(suites)}); merge one suite at a time, "
            "or name the output with {suite} (-o merged/{suite}.json)"
        )
    first = files[0]
    seen: dict[int, ShardFile] = {}
    for item in files:
        if (difference := _difference(first.stamp, item.stamp)) is not None:
            raise ShardError(
                f"merge: {item.path} (shard {item.stamp.shard}) and {first.path} (shard {first.stamp.shard}) "
                f"ran different configs: {difference}"
            )
        if item.stamp.shard.index in seen:
            raise ShardError(
                f"merge: shard {item.stamp.shard} of {item.stamp.suite} is given twice: "
                f"{seen[item.stamp.shard.index].path} and {item.path}"
            )
        seen[item.stamp.shard.index] = item
    ordered = tuple(seen[n] for n in sorted(seen))
    missing = tuple(n for n in first.stamp.planned if n not in seen)
    return MergePlan(suites[0], ordered, missing)


def _difference(a: ShardStamp, b: ShardStamp) -> str | None:
    if a.shard.total != b.shard.total:
        return f"{a.shard.total} shards against {b.shard.total}"
    if a.mode != b.mode:
        return f"mode {a.mode} against {b.mode}"
    if a.repeat != b.repeat:
        return f"--repeat {a.repeat} against {b.repeat}"
    if a.selected != b.selected:
        return f"another selection of cases ({len(a.selected)} against {len(b.selected)} case(s))"
    if a.plan != b.plan:
        return f"another plan (balanced by {a.balanced_by} against {b.balanced_by})"
    if a.fingerprint != b.fingerprint:
        return "other suite files, models, git revision or agent instructions (the eval description differs)"
    return None


def merge_shards(plan: MergePlan, output: Path) -> Merged:
    """Write the merged eval of ``plan`` to ``output``."""
    documents, rows = [], []
    for item in plan.files:
        document, texts = _read(item.path)
        documents.append(document)
        rows += _reindexed(texts, item)
    rows.sort(key=lambda row: (row[0], row[1]))
    merged = _document(plan, documents)
    head, tail = json.dumps(merged, indent=2, ensure_ascii=False).split(json.dumps(_ROWS), 1)
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = output.with_name(output.name + ".merging")
    with tmp.open("wb") as handle:
        handle.write(head.encode())
        handle.write(b"[\n" + b",\n".join(text for _, _, text in rows) + b"\n    ]" if rows else b"[]")
        handle.write(tail.encode())
    tmp.replace(output)
    shards = tuple(item.stamp.shard.index for item in plan.files)
    return Merged(merged["evalId"], output, len(rows), shards, plan.missing)


def _read(path: Path) -> tuple[dict[str, Any], list[bytes]]:
    from agent_evals.report.json_rows import split_raw_rows  # lazy: keeps agent_evals.runner.merge_command's start-up as small as it is

    split = split_raw_rows(path)
    if split is not None:
        return split
    try:  # another layout (e.g. compact JSON): parse it whole, write its rows in Promptfoo's
        document = json.loads(path.read_bytes())
        rows = document["results"]["results"]
        document["results"]["results"] = []
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ShardError(f"merge: {path}: not a Promptfoo results file (-o JSON): {exc}") from None
    return document, [textwrap.indent(json.dumps(r, indent=2, ensure_ascii=False), " " * 6).encode() for r in rows]


def _reindexed(texts: Sequence[bytes], item: ShardFile) -> list[tuple[int, int, bytes]]:
    """Each row as (new testIdx, promptIdx, text with the new testIdx)."""
    stamp = item.stamp
    repeat = stamp.repeat
    parsed = [_row_fields(text, item.path) for text in texts]
    positions = _positions(stamp, sorted({(idx // repeat, desc) for idx, _, desc, _ in parsed}), item.path)
    out = []
    for (idx, prompt, _desc, match), text in zip(parsed, texts, strict=True):
        new = positions[idx // repeat] * repeat + idx % repeat
        out.append((new, prompt, text[: match.start(1)] + str(new).encode() + text[match.end(1) :]))
    return out


def _row_fields(text: bytes, path: Path) -> tuple[int, int, str, re.Match[bytes]]:
    found = _TEST_IDX.search(text)
    if found is None:
        raise ShardError(f"merge: {path}: a result row without testIdx")
    prompt = _PROMPT_IDX.search(text)
    return int(found.group(1)), int(prompt.group(1)) if prompt else 0, _description(text), found


def _description(text: bytes) -> str:
    start = text.find(_TEST_CASE)
    if start < 0:
        return ""
    end = text.find(_ROW_KEY, start + len(_TEST_CASE))
    found = _DESCRIPTION.search(text, start, end if end >= 0 else len(text))
    return json.loads(found.group(1)) if found else ""


def _positions(stamp: ShardStamp, tests: Sequence[tuple[int, str]], path: Path) -> dict[int, int]:
    """Each local test (Promptfoo's test number in the shard) → its position in the selection."""
    free: dict[str, list[int]] = {}
    for position in stamp.plan[stamp.shard.index - 1]:
        free.setdefault(stamp.selected[position].description, []).append(position)
    out: dict[int, int] = {}
    for local, description in tests:
        if local in out:
            continue
        left = free.get(description)
        if not left:
            raise ShardError(
                f"merge: {path}: test {description!r} is not one the plan gives shard {stamp.shard} "
                "(was the file renamed, or run with other filters?)"
            )
        out[local] = left.pop(0)
    return out


def _document(plan: MergePlan, documents: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    first = documents[0]
    created = min(_created(d) for d in documents)
    config = dict(first.get("config") or {})
    held = ", ".join(str(f.stamp.shard.index) for f in plan.files)
    gap = f" (missing {', '.join(map(str, plan.missing))})" if plan.missing else ""
    config["description"] = f"{config.get('description') or plan.suite} · shards {held} of {plan.stamp.shard.total}{gap}"
    config["metadata"] = {**(config.get("metadata") or {}), "agentEvals": _merged_stamp(plan)}
    config.pop("outputPath", None)
    results = {
        "version": 3,
        "timestamp": created,
        "prompts": _prompts(d["results"].get("prompts") or [] for d in documents),
        "results": _ROWS,
        "stats": _stats(d["results"].get("stats") or {} for d in documents),
    }
    return results_document(_eval_id(plan, created), results, config, documents)


def results_document(
    eval_id: str, results: dict[str, Any], config: dict[str, Any], documents: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """A whole ``-o`` document of ``results`` made of ``documents`` (the first one's metadata and
    options, every one's vars and traces): also the merged rounds of --repeat-until-decided."""
    first = documents[0]
    merged: dict[str, Any] = {
        "evalId": eval_id,
        "results": results,
        "config": config,
        "shareableUrl": None,
        "metadata": {
            **(first.get("metadata") or {}),
            "evaluationCreatedAt": results["timestamp"],
            "exportedAt": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + "000Z",
        },
        "vars": list(dict.fromkeys(v for d in documents for v in d.get("vars") or [])),
        "runtimeOptions": first.get("runtimeOptions") or {},
    }
    traces = [t for d in documents for t in d.get("traces") or []]
    if traces:
        merged["traces"] = traces
    return merged


def _merged_stamp(plan: MergePlan) -> dict[str, Any]:
    stamp = plan.stamp.to_json()
    for key in ("shard", "run_id"):
        stamp.pop(key)
    return {
        **stamp,
        "format": MERGED_FORMAT,
        "shards": [f.stamp.shard.index for f in plan.files],
        "missing": list(plan.missing),
        "run_ids": list(dict.fromkeys(f.stamp.run_id for f in plan.files)),
    }


def _created(document: Mapping[str, Any]) -> str:
    metadata = document.get("metadata") or {}
    return str(metadata.get("evaluationCreatedAt") or document["results"].get("timestamp") or "")


def _eval_id(plan: MergePlan, created: str) -> str:
    """Promptfoo's form, ``eval-XyZ-2026-01-01T10:00:00``; the same shards give the same id (merging
    them again replaces the eval), another set of them another id."""
    held = ",".join(str(f.stamp.shard.index) for f in plan.files)
    return promptfoo_eval_id(f"{plan.stamp.fingerprint} {held}", created)


def promptfoo_eval_id(seed: str, created: str) -> str:
    """An eval id of Promptfoo's form, ``eval-XyZ-2026-01-01T10:00:00``: the same seed and time, the same id."""
    digest = hashlib.sha256(f"{seed} {created}".encode()).digest()
    code = "".join(_ALPHABET[b % len(_ALPHABET)] for b in digest[:3])
    return f"eval-{code}-{created[:19]}"


def _prompts(lists: Iterable[Sequence[Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """The prompts of every shard, one per prompt and provider, their metrics summed."""
    merged: dict[tuple[Any, Any], dict[str, Any]] = {}
    for prompts in lists:
        for prompt in prompts:
            key = (prompt.get("id"), prompt.get("provider"))
            if key in merged:
                merged[key]["metrics"] = _add(merged[key].get("metrics") or {}, prompt.get("metrics") or {})
            else:
                merged[key] = dict(prompt)
    return list(merged.values())


def _stats(stats: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    total: dict[str, Any] = {}
    for item in stats:
        longest = {k: max(total.get(k) or 0, item[k]) for k in _LONGEST if isinstance(item.get(k), int | float)}
        total = {**_add(total, {k: v for k, v in item.items() if k not in _LONGEST}), **longest}
    return total


def _add(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """Numbers added, mappings added key by key; anything else keeps the first value."""
    out = dict(a)
    for key, value in b.items():
        mine = out.get(key)
        if _number(mine) and _number(value):
            out[key] = mine + value
        elif isinstance(mine, Mapping) and isinstance(value, Mapping):
            out[key] = _add(mine, value)
        elif key not in out:
            out[key] = value
    return out


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


merged_prompts = _prompts  # also the rounds of --repeat-until-decided (agent_evals.runner.rounds_merge)
merged_stats = _stats
