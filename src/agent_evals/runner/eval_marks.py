"""Mark an eval in Promptfoo's results database, so the viewer's list tells it apart.

Promptfoo 0.123 shows an eval's ``description`` column in the list and ``config.description``
on the eval's page; both are set. Used to mark an interrupted eval, which Promptfoo itself
saves like any other (its ``results`` stay ``{}``).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

INTERRUPTED = "[INTERRUPTED] "


def results_db(promptfoo_config_dir: str | Path) -> Path:
    return Path(promptfoo_config_dir) / "promptfoo.db"


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
