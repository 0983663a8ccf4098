"""Mark an eval in Promptfoo's results database, so the viewer's list tells it apart; tell
whether the database is ready for more than one Promptfoo process.

Promptfoo 0.123 shows an eval's ``description`` column in the list and ``config.description``
on the eval's page; both are set. Used to mark an interrupted eval, which Promptfoo itself
saves like any other (its ``results`` stay ``{}``).
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

from agent_evals.paths import project_root

INTERRUPTED = "[INTERRUPTED] "


def results_db(promptfoo_config_dir: str | Path) -> Path:
    return Path(promptfoo_config_dir) / "promptfoo.db"


def database_ready(db: Path) -> bool:
    """The results database exists with every migration of this Promptfoo applied: another Promptfoo
    process may start on it (two that create or migrate it at once fail: "table already exists")."""
    journal = project_root() / "node_modules" / "promptfoo" / "dist" / "drizzle" / "meta" / "_journal.json"
    try:
        expected = len(json.loads(journal.read_text(encoding="utf-8"))["entries"])
        if not db.is_file():
            return False
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)) as con:
            applied = con.execute("SELECT count(*) FROM __drizzle_migrations").fetchone()[0]
    except (OSError, ValueError, KeyError, sqlite3.Error):
        return False
    return applied >= expected


def mark_interrupted(db: Path, eval_id: str) -> bool:
    """Prefix the eval's description with ``[INTERRUPTED]``; False when the eval or DB is not there."""
    if not db.is_file():
        return False
    with sqlite3.connect(db, timeout=10) as con:
        row = con.execute("SELECT description FROM evals WHERE id = ?", (eval_id,)).fetchone()
        if row is None:
            return False
        old = row[0] or ""
        new = old if old.startswith(INTERRUPTED) else INTERRUPTED + old
        con.execute(
            "UPDATE evals SET description = ?, config = json_set(config, '$.description', ?) WHERE id = ?",
            (new, new, eval_id),
        )
    return True
