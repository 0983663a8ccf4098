"""The pull request page (``/repos/spokes/pullrequest/{id}``): plain HTML, everything escaped."""

from __future__ import annotations

from html import escape

from agent_evals.packs.spoke.portal.models import PullRequest

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:60rem;color:#1b1f24}
.badge{display:inline-block;padding:.15rem .6rem;border-radius:1rem;font-size:.85rem;color:#fff}
.active{background:#0969da}.abandoned{background:#6e7781}.completed{background:#8250df}
.succeeded{background:#1a7f37}.failed{background:#cf222e}
dl{display:grid;grid-template-columns:10rem 1fr;gap:.3rem 1rem}dt{color:#57606a}
pre{background:#f6f8fa;padding:1rem;overflow-x:auto;font-size:.85rem}
.add{color:#1a7f37}.del{color:#cf222e}.hunk{color:#8250df}
.errors li code{background:#fff1f0}
"""


def _diff_line(line: str) -> str:
    if line.startswith("@@"):
        css = "hunk"
    elif line.startswith("+") and not line.startswith("+++"):
        css = "add"
    elif line.startswith("-") and not line.startswith("---"):
        css = "del"
    else:
        return escape(line)
    return f'<span class="{css}">{escape(line)}</span>'


def _validation(pr: PullRequest) -> str:
    badge = f'<span class="badge {escape(pr.validation_status)}">{escape(pr.validation_status)}</span>'
    if not pr.validation_errors:
        return f"<p>Validation gate: {badge}</p>"
    items = "".join(
        f"<li><code>{escape(e.path or '/')}</code> {escape(e.message)} <small>({escape(e.rule)})</small></li>"
        for e in pr.validation_errors
    )
    return f'<p>Validation gate: {badge}</p><ul class="errors">{items}</ul>'


def render_pull_request(pr: PullRequest) -> str:
    """The full HTML page of a pull request (``pr.diff`` included when set)."""
    fields = [
        ("Spoke file", pr.file),
        ("Source branch", pr.source_branch),
        ("Target branch", pr.target_branch),
        ("Created", pr.created_at),
        ("Created by", pr.created_by),
        ("Eval / test", f"{pr.eval_id or '-'} / {pr.test_id or '-'}"),
    ]
    rows = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in fields)
    diff = "\n".join(_diff_line(line) for line in (pr.diff or "").splitlines())
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>PR {pr.id}: {escape(pr.title)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>Pull request {pr.id}: {escape(pr.title)}</h1>"
        f'<p><span class="badge {escape(pr.status)}">{escape(pr.status)}</span></p>'
        f"<dl>{rows}</dl>"
        f'<h2>Description</h2><p style="white-space:pre-wrap">{escape(pr.description)}</p>'
        f"<h2>Validation</h2>{_validation(pr)}"
        f"<h2>Changes</h2><pre>{diff}</pre>"
        "</body></html>"
    )


def render_not_found(message: str) -> str:
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Not found</title></head>'
        f"<body><h1>Not found</h1><p>{escape(message)}</p></body></html>"
    )
