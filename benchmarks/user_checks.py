"""What the deterministic user checks cost per user turn, and how often they leave a golden
conversation to the judge.

Reviews every golden conversation with a simulated user, in every suite (the brief with its
fixture values filled, the pack's framing, the simulated user's prompt for the leak check),
``--rounds`` times, and every user-side mutation of each once. Targets (issue 25): under 1 ms
per user turn, no finding on a golden conversation, every mutation caught, and the judge asked
about the user on under 10% of the golden conversations.

    .venv/bin/python benchmarks/user_checks.py [--rounds 50]
"""

from __future__ import annotations

import argparse
import statistics
import time
from agent_evals.golden.user_side import golden_users, user_mutations
from agent_evals.user_checks import review


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    golden = golden_users()
    checked = [(c, u) for _, c, u in golden if u is not None]
    turns = sum(len(c.record.turns) for c, _ in checked)
    per_turn, cpu_per_turn = [], []
    for _ in range(args.rounds):
        started, cpu = time.perf_counter(), time.process_time()
        for cassette, user in checked:
            review(cassette.record, user.brief, user.framing, prompt=user.prompt)
        per_turn.append((time.perf_counter() - started) / turns * 1e6)
        cpu_per_turn.append((time.process_time() - cpu) / turns * 1e6)
    results = [review(c.record, u.brief, u.framing, prompt=u.prompt) for c, u in checked]
    flagged = sum(1 for r in results if r.review.findings)
    asked = sum(1 for r in results if r.questions)
    made = caught = 0
    for cassette, user in checked:
        for mutation in user_mutations(cassette, user):
            made += 1
            found = review(mutation.cassette.record, user.brief, user.framing, prompt=user.prompt).review
            caught += mutation.must_find in {f.check for f in found.findings}
    median = statistics.median(cpu_per_turn)  # CPU time: what a shared machine's load does not inflate
    print(f"deterministic user checks: median {median:.0f} µs of CPU per user turn (target < 1000 µs; wall "
          f"median {statistics.median(per_turn):.0f} µs, p90 {statistics.quantiles(per_turn, n=10)[-1]:.0f} µs) "
          f"over {len(checked)} golden conversations with a simulated user ({turns} user turns), {args.rounds} rounds")
    print(f"golden conversations: {len(golden)} ({len(golden) - len(checked)} with fixed messages, not checked); "
          f"flagged {flagged} (target 0); the judge asked about the user on {asked} ({asked / len(golden):.1%}; "
          f"target < 10%)")
    print(f"user-side mutations: {caught} of {made} caught (target: all)")
    return 0 if median < 1000 and flagged == 0 and caught == made and asked / len(golden) < 0.10 else 1


if __name__ == "__main__":
    raise SystemExit(main())
