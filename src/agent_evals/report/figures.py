"""Figures and labels shared by the terminal and markdown formats (pure)."""

from __future__ import annotations

from collections.abc import Mapping

from agent_evals.record import ROLES, Role, Usage
from agent_evals.report.model import CaseSummary, GroupSummary, Pattern, Report, RunLabel

ROLE_NAMES: dict[Role, str] = {"agent": "agent", "user": "simulated user", "judge": "judge"}


def rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def mean(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


GROUP_HEADER = ("cases", "runs", "pass", "fail", "err", "flaky", "pass^k", "pass rate")


def group_counts(group: GroupSummary) -> list[str]:
    """The cells under ``GROUP_HEADER`` for one group or priority (every format shows them)."""
    return [
        str(group.cases), str(group.runs), str(group.passed), str(group.failed), str(group.errors), str(group.flaky),
        rate(group.pass_hat_k), percent(group.pass_rate),
    ]


def tokens(count: int) -> str:
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M"
    return f"{count / 1000:.1f}k" if count >= 1000 else str(count)


def money(value: float) -> str:
    return f"${value:.4f}" if value < 1 else f"${value:.2f}"


def ends(counts: Mapping[str, int]) -> str:
    """``done 2, max_turns 1``, most frequent first."""
    return ", ".join(f"{end} {n}" for end, n in sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def one_line(text: str | None, width: int) -> str:
    """The first line of ``text``, cut to ``width`` characters with an ellipsis."""
    line = (text or "").lstrip("\n").splitlines()[0].rstrip() if (text or "").strip() else ""
    return line if len(line) <= width else line[: max(width - 1, 0)] + "…"


def brief(reason: str | None, width: int) -> str:
    """A reason on one line (the terminal's case lines and every report format show a failing check
    this way): its head, fitted so that its short parts (the diagnosis: ``missing X after Y``) stay
    whole, and its first two detail lines (the JSON pointers and values where it parts from what
    was expected)."""
    lines = (reason or "").strip().splitlines()
    if not lines:
        return ""
    details = [line.strip() for line in lines[1:] if line.strip().lstrip("+-~ ").startswith("/")][:2]
    tail = (" — " + "; ".join(details)) if details else ""
    if len(tail) > width * 3 // 5:
        tail = one_line(tail, width * 3 // 5)
    return fit(lines[0].rstrip(), width - len(tail)) + tail


def fit(line: str, width: int) -> str:
    """``line`` in ``width`` characters: its ``; ``-separated parts are cut from the longest down (the
    lists of expected and actual tools), so that the short ones, which say what went wrong, stay whole."""
    if len(line) <= width:
        return line
    parts = line.split("; ")
    if len(parts) == 1:
        return one_line(line, width)
    room = max(width - 2 * (len(parts) - 1), 0)
    sizes = [0] * len(parts)
    for placed, index in enumerate(sorted(range(len(parts)), key=lambda i: len(parts[i]))):
        sizes[index] = min(len(parts[index]), room // (len(parts) - placed))
        room -= sizes[index]
    return "; ".join(part if len(part) <= size else part[: max(size - 1, 0)] + "…"
                     for part, size in zip(parts, sizes, strict=True))


def status(case: CaseSummary) -> str:
    return {"pass": "pass", "fail": "FAIL", "flaky": "FLAKY", "error": "ERROR", "invalid": "INVALID",
            "incomplete": "INCOMPLETE"}[case.verdict]


def apart(counts: CaseSummary | GroupSummary) -> str:
    """``, 2 invalid, 1 incomplete``: the runs that are neither a pass nor a fail, nor an error."""
    parts = [f"{counts.invalid} invalid"] if counts.invalid else []
    parts += [f"{counts.incomplete} incomplete"] if counts.incomplete else []
    return "".join(f", {part}" for part in parts)


def k_label(report: Report) -> str:
    return f"k={report.k}" if report.k else "k=runs"


def label(ran: RunLabel) -> str:
    """``my-agent gpt-4.1 t=0.2 instructions e567a6bd · live · rev abc1234``."""
    parts = []
    for provider, agent in ran.agents:
        temp = f" t={agent.temperature:g}" if agent.temperature is not None else ""
        who = agent.name if agent.name == provider else f"{provider}: {agent.name}"
        sha = f" instructions {agent.instructions_sha256[:8]}" if agent.instructions_sha256 else ""
        parts.append(f"{who} {agent.model}{temp}{sha}".strip())
    parts += ["/".join(ran.modes)] if ran.modes else []
    parts += ["rev " + "/".join(ran.git_revisions)] if ran.git_revisions else []
    return " · ".join(parts) or "(nothing known about what ran)"


def usage_lines(usage: Mapping[Role, Usage]) -> list[str]:
    lines = []
    for role in ROLES:
        u = usage.get(role, Usage())
        lines.append(
            f"{ROLE_NAMES[role]}: {u.calls} call(s), {tokens(u.prompt_tokens)} prompt + "
            f"{tokens(u.completion_tokens)} completion tokens, {money(u.cost)}"
        )
    return lines


def pattern_line(pattern: Pattern, code: str = "`") -> str:
    """``/config/location`` wrong in 4 cases (C01, C02, …; 6 runs; argument_match)."""
    cases = ", ".join(pattern.cases[:6]) + (", …" if len(pattern.cases) > 6 else "")
    where = f"{len(pattern.cases)} case(s) ({cases}; {pattern.runs} failed run(s))"
    if pattern.kind == "metric":
        return f"metric {code}{pattern.name}{code} failed in {where}"
    metrics = ", ".join(pattern.metrics)
    if pattern.kind == "tool":
        return f"tool {code}{pattern.name}{code} named in failures of {where} by {metrics}"
    return f"{code}{pattern.name}{code} wrong in {where} by {metrics}"


def headline(report: Report) -> str:
    t = report.totals
    return (
        f"{t.cases} case(s), {t.runs} run(s): {t.passed} passed, {t.failed} failed, {t.errors} error(s){apart(t)}; "
        f"{t.flaky} flaky; pass^k ({k_label(report)}) {rate(t.pass_hat_k)}"
    )


def evals(report: Report) -> str:
    return ", ".join(f"{e.eval_id}" + (f" ({e.suite})" if e.suite else "") for e in report.evals) or "none"


def until_decided_lines(report: Report) -> list[str]:
    """``tickets: until decided (≤5 runs, 4 rounds): 80 of 110 runs, 30 saved; decided early: C01 2, …``."""
    lines = []
    for info in report.evals:
        rounds = info.until_decided
        if not rounds or not isinstance(rounds.get("runs"), dict):
            continue
        runs, most = rounds["runs"], int(rounds.get("max") or 0)
        used, flat = sum(runs.values()), most * len(runs)
        early = [f"{case} {n}" for case, n in runs.items() if n < most]
        shown = ", ".join(early[:6]) + (", …" if len(early) > 6 else "")
        lines.append(f"{info.suite or info.eval_id}: until decided (≤{most} runs, {rounds.get('rounds')} rounds): "
                     f"{used} of {flat} runs, {flat - used} saved" + (f"; decided early: {shown}" if early else ""))
    return lines
