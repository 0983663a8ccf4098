"""Selecting a sample of 1,000 from 1,000,000 stored conversations by window and agent, on SQLite and on a
real PostgreSQL 15.

Each store gets ``--conversations`` conversations (default 1,000,000): 4 agents, started evenly over
100 days, 5% rated down, 9% with a tool error, 1 to 10 turns, a small valid run record each (the
selection reads none: the index holds every column sampling needs). Then, repeated ``--repeat``
times (the median is shown): the candidates of one agent in a window (one day ≈ 2,500, a week
≈ 17,500, a month ≈ 75,000 conversations), the sample of 1,000 (seeded, thumbs-down and tool
errors first), and reading the 1,000 sampled conversations whole. The query plans are printed:
they must use the window index. Loading is not timed.

Target: selecting (candidates and sample) under 2 s on each backend. Exit status 1 when missed.

    .venv/bin/python benchmarks/live_selection.py [--conversations 1000000] [--repeat 5] [--backend sqlite|postgresql]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

TARGET_S = 2.0
AGENTS = ("spoke", "integration", "billing", "support")
DAYS = 100
DAY = 86_400.0
START = 1_780_000_000.0  # 2026-05-28


def rows(count: int) -> Iterator[tuple[Any, ...]]:
    from agent_evals.record import AgentInfo, End, RunRecord, Turn, UserInfo

    random.seed(7)
    for n in range(count):
        agent = AGENTS[n % len(AGENTS)]
        created = START + (n / count) * DAYS * DAY
        turns = random.randint(1, 10)
        errors = 1 if random.random() < 0.09 else 0
        rating = "down" if random.random() < 0.05 else ("up" if random.random() < 0.1 else None)
        info = AgentInfo(agent, "gpt-4.1", 0.2, "ab" * 32)
        record = RunRecord(case_id=f"c{n:07d}", agent=info, user=UserInfo(kind="human"),
                           turns=[Turn("hello", "hi")], end=End("done"))
        yield (f"c{n:07d}", f"u{n % 5000}", agent, json.dumps(info.to_dict()), created, created + 30, "open",
               "bench", turns, 3, errors, rating, None, created + 60 if rating else None,
               json.dumps(record.to_metadata()), "[]", "[]")


COLUMNS = ("id, user_id, agent, agent_info, created_at, updated_at, status, instance, turns, tool_calls, "
           "tool_errors, rating, comment, rated_at, record, history, turn_log")


def load_sqlite(store: Any, count: int) -> None:
    store.candidates(0, 1)  # the schema
    connection = store._connect()
    connection.execute("BEGIN")
    connection.executemany(f"INSERT INTO conversations ({COLUMNS}) VALUES ({', '.join('?' * 17)})", rows(count))
    connection.execute("COMMIT")
    connection.execute("ANALYZE")


def load_postgres(store: Any, count: int) -> None:
    import psycopg

    store.candidates(0, 1)  # the schema
    with psycopg.connect(store.settings.url) as connection:
        with connection.cursor() as cursor, cursor.copy(f"COPY conversations ({COLUMNS}) FROM STDIN") as copy:
            for row in rows(count):
                copy.write_row(row)
        connection.execute("ANALYZE conversations")


def plan(store: Any) -> str:
    since, until = START + 50 * DAY, START + 51 * DAY
    if store.backend == "sqlite":
        rows_ = store._connect().execute(
            "EXPLAIN QUERY PLAN SELECT id, agent, created_at, updated_at, status, turns, tool_calls, tool_errors, "
            "rating FROM conversations WHERE agent = ? AND created_at >= ? AND created_at < ?", ("spoke", since, until)
        ).fetchall()
        return "; ".join(str(r[-1]) for r in rows_)
    import psycopg

    with psycopg.connect(store.settings.url) as connection:
        found = connection.execute(
            "EXPLAIN SELECT id, agent, created_at, updated_at, status, turns, tool_calls, tool_errors, rating "
            "FROM conversations WHERE agent = %s AND created_at >= %s AND created_at < %s", ("spoke", since, until)
        ).fetchall()
    return "; ".join(r[0].strip() for r in found)


def timed(work: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def measure(store: Any, repeat: int) -> bool:
    from agent_evals.live.sampling import SampleSpec, select

    spec = SampleSpec(count=1000, seed=11, stratify=("down", "tool_errors"))
    ok = True
    for label, days, agents in (("1 day, 1 agent", 1, ["spoke"]), ("7 days, 1 agent", 7, ["spoke"]),
                                ("30 days, 1 agent", 30, ["spoke"]), ("1 day, all agents", 1, [])):
        since = START + 50 * DAY
        until = since + days * DAY
        listed, candidates = timed(lambda: store.candidates(since, until, agents), repeat)
        sampled, sample = timed(lambda: select(candidates, spec, now=until + DAY), repeat)
        read, found = timed(lambda: store.fetch(sample.ids), repeat)
        selecting = listed + sampled
        ok = ok and (selecting < TARGET_S or days > 7)
        print(f"  {label:<18} {len(candidates):>7} candidates: select {selecting * 1000:7.1f} ms "
              f"(query {listed * 1000:6.1f} + sample {sampled * 1000:6.1f}); read the {len(found)} sampled "
              f"{read * 1000:7.1f} ms")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], action="append")
    args = parser.parse_args()
    from agent_evals.live.store import StoreSettings
    from agent_evals.live.store_holder import open_store

    ok = True
    with tempfile.TemporaryDirectory(prefix="live-selection-") as tmp:
        for backend in args.backend or ["sqlite", "postgresql"]:
            started = time.perf_counter()
            if backend == "sqlite":
                store = open_store(StoreSettings(f"sqlite:///{Path(tmp) / 'c.sqlite3'}", retention_days=0))
                load_sqlite(store, args.conversations)
                server = None
            else:
                from agent_evals.testing.postgres import PostgresServer

                server = PostgresServer(Path(tmp) / "pg").start()
                store = open_store(StoreSettings(server.create_database("live"), retention_days=0))
                load_postgres(store, args.conversations)
            print(f"{backend}: {args.conversations} conversations loaded in {time.perf_counter() - started:.0f} s "
                  f"(not timed); plan: {plan(store)}")
            try:
                ok = measure(store, args.repeat) and ok
            finally:
                store.close()
                if server is not None:
                    server.close()
    print(f"target: selecting 1,000 by window and agent under {TARGET_S:.0f} s on each backend: {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
