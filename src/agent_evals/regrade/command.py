"""``agent-evals regrade EVAL|FILE.json [--judge] [-o OUT.json] [--no-import]``.

Re-grades a stored eval with today's kit checks, from each row's recorded end state (the
run record's snapshot) and run record: no conversation runs, no portal is needed, and
without ``--judge`` no model is asked (judged checks reuse the judge's recorded verdicts
while they answer today's questions). The new eval is written beside the old one: an ``-o``
file (default ``results/<eval id>.regraded.json``, compact JSON) imported into the viewer's database as a
new eval (``promptfoo import``, as ``agent-evals merge`` does), so ``report`` and ``gate``
compare it with runs graded by the same checks.

Exit status: 0 regraded; 2 nothing written (an eval or file that cannot be read, no judge
for ``--judge``, an import that failed).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent_evals.packs import Pack, PackError, load_pack
from agent_evals.paths import promptfoo_config_dir
from agent_evals.regrade.rows import Regraded, regrade_row
from agent_evals.regrade.source import load_eval
from agent_evals.report.errors import ReportInputError
from agent_evals.shards.merge import promptfoo_eval_id
from agent_evals.suites.shard_spec import ShardError
from agent_evals.judge import judge_configured

JUDGES_AT_ONCE = 4
MAX_LISTED = 8


def regrade_command(spec: str, *, output: Path | None = None, judge: bool = False, import_eval: bool = True) -> int:
    try:
        data = load_eval(spec, promptfoo_config_dir())
        rows = data["results"]["results"]
        if judge:
            _rejudge_all(rows)
        packs = packs_of_providers(data.get("config") or {})
        regraded = [regrade_row(row, pack_of_row(row, packs)) for row in rows]
        document = regraded_document(data, regraded, judge=judge)
        path = output or Path("results") / f"{data.get('evalId') or Path(spec).stem}.regraded.json"
        _write(document, path)
        if import_eval:
            from agent_evals.runner.merge_command import import_results_file  # lazy: keeps agent_evals.regrade.command's start-up as small as it is

            import_results_file(path)
    except (ReportInputError, ShardError, PackError) as exc:
        print(f"regrade: {str(exc).removeprefix('merge: ')}", file=sys.stderr)
        return 2
    print("\n".join(summary(data, document, regraded, path, imported=import_eval)))
    return 0


def packs_of_providers(config: Mapping[str, Any]) -> dict[str, Pack]:
    """The pack of each of the eval's providers that names one (``config.pack``: a built-in pack or a
    dotted path), by its label and by its id, as a row names its provider; raises PackError, one line."""
    out: dict[str, Pack] = {}
    for provider in config.get("providers") or []:
        settings = provider.get("config") if isinstance(provider, Mapping) else None
        if isinstance(settings, Mapping) and settings.get("pack"):
            pack = load_pack(str(settings["pack"]))
            out.update({str(key): pack for key in (provider.get("label"), provider.get("id")) if key})
    return out


def pack_of_row(row: Mapping[str, Any], packs: Mapping[str, Pack]) -> Pack | None:
    """The pack of the provider that answered ``row`` (None: the generic pack's, or not known)."""
    provider = row.get("provider")
    if not isinstance(provider, Mapping):
        return None
    return packs.get(str(provider.get("label") or "")) or packs.get(str(provider.get("id") or ""))


def _rejudge_all(rows: Sequence[dict[str, Any]]) -> None:
    from agent_evals.regrade.judge import rejudge  # lazy: keeps agent_evals.regrade.command's start-up as small as it is

    if not judge_configured():
        raise ReportInputError("--judge: no judge model is configured (JUDGE_MODEL and an LLM endpoint, see README)")

    async def all_rows() -> None:
        limit = asyncio.Semaphore(JUDGES_AT_ONCE)

        async def one(row: dict[str, Any]) -> None:
            async with limit:
                await rejudge(row)

        await asyncio.gather(*(one(row) for row in rows))

    asyncio.run(all_rows())


def regraded_document(data: dict[str, Any], regraded: Sequence[Regraded], *, judge: bool) -> dict[str, Any]:
    """The new eval: the old one's config and prompts, the re-graded rows, stats and metrics summed again."""
    now = datetime.now(UTC)
    created = now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"
    rows = [item.row for item in regraded]
    old_id = str(data.get("evalId") or "")
    config = dict(data.get("config") or {})
    config["description"] = f"{config.get('description') or old_id} · regraded {created[:10]}"
    config["metadata"] = {**(config.get("metadata") or {}), "agentEvalsRegrade": {
        "from": old_id, "at": created, "judge": "live" if judge else "recorded verdicts", "git_revision": _revision(),
    }}
    config.pop("outputPath", None)
    results = dict(data["results"])
    results.update(timestamp=created, results=rows, prompts=_prompts(results.get("prompts") or [], rows))
    if isinstance(results.get("stats"), dict):  # the old eval finished: so did this one
        results["stats"] = _stats(results["stats"], rows)
    return {**data, "evalId": promptfoo_eval_id(old_id, created), "results": results, "config": config,
            "metadata": {**(data.get("metadata") or {}), "evaluationCreatedAt": created, "exportedAt": created}}


def _revision() -> str | None:
    from agent_evals.runner.run import git_revision  # lazy: keeps agent_evals.regrade.command's start-up as small as it is

    return git_revision()


def _stats(old: dict[str, Any], rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    counts = Counter(row.get("failureReason") for row in rows)
    return {**old, "successes": counts[0], "failures": counts[1], "errors": counts[2]}


def _prompts(prompts: Sequence[dict[str, Any]], rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each prompt's pass, fail and error counts and scores, from its re-graded rows."""
    out = []
    for index, prompt in enumerate(prompts):
        mine = [row for row in rows if int(row.get("promptIdx") or 0) == index]
        metrics = dict(prompt.get("metrics") or {})
        named: Counter[str] = Counter()
        count: Counter[str] = Counter()
        for row in mine:
            for name, value in (row.get("namedScores") or {}).items():
                named[name] += value
                count[name] += 1
        components = [c for row in mine for c in ((row.get("gradingResult") or {}).get("componentResults") or [])]
        metrics.update(
            score=sum(float(row.get("score") or 0) for row in mine),
            testPassCount=sum(1 for row in mine if row.get("failureReason") == 0),
            testFailCount=sum(1 for row in mine if row.get("failureReason") == 1),
            testErrorCount=sum(1 for row in mine if row.get("failureReason") == 2),
            assertPassCount=sum(1 for c in components if c.get("pass")),
            assertFailCount=sum(1 for c in components if not c.get("pass")),
            namedScores=dict(named), namedScoresCount=dict(count),
        )
        out.append({**prompt, "metrics": metrics})
    return out


def _write(document: dict[str, Any], path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".writing")
        tmp.write_text(json.dumps(document, separators=(",", ":"), ensure_ascii=False), encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        raise ReportInputError(f"cannot write {path}: {exc.strerror or exc}") from None


def summary(data: dict[str, Any], document: dict[str, Any], regraded: Sequence[Regraded], path: Path, *,
            imported: bool) -> list[str]:
    checks = sum(item.checks for item in regraded)
    kept = sum(item.kept for item in regraded)
    where = f"imported as {document['evalId']}" if imported else f"eval {document['evalId']}, not imported"
    lines = [
        f"regrade: {data.get('evalId')} → {path} ({where}): {len(regraded)} row(s), {checks} kit check(s) graded "
        f"again, {kept} other assertion(s) kept as recorded",
    ]
    changed = Counter((_case(item.row), item.before, item.after) for item in regraded if item.before != item.after)
    if changed:
        shown = [f"{case} {before}→{after}" + (f" ×{n}" if n > 1 else "") for (case, before, after), n in changed.items()]
        more = f", and {len(shown) - MAX_LISTED} more" if len(shown) > MAX_LISTED else ""
        lines.append(f"verdicts changed in {sum(changed.values())} row(s): {', '.join(shown[:MAX_LISTED])}{more}")
    else:
        lines.append("no verdict changed")
    lines.append(f"report: agent-evals report {document['evalId'] if imported else path}")
    return lines


def _case(row: dict[str, Any]) -> str:
    meta = ((row.get("response") or {}).get("metadata") or {})
    test = row.get("testCase") or {}
    return str(meta.get("case_id") or (test.get("metadata") or {}).get("id") or test.get("description") or "?")
