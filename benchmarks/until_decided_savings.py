"""``--repeat-until-decided 5`` against a flat ``--repeat 5``: runs saved, and the same verdicts.

On the synthetic suite of ``benchmarks/gate_statistics.py`` (50 cases with known pass rates:
30 always pass, 10 at 0.95, 6 at 0.9, 4 at 0.8) and on a flakier one (50 cases from 0.5 to 1.0),
each trial draws every case's five flat runs; the rounds of ``--repeat-until-decided 5`` (two
runs, then one more a round for the undecided cases: :func:`agent_evals.report.sequential.decide`,
exactly as :mod:`agent_evals.runner.until_decided` asks it) see the first runs of the same
draws. Compared per case: the label (pass, fail, flaky) and the evidence tier against the
baseline as the report computes it (:func:`agent_evals.report.evidence.weigh`, the family over
every case of the run). Without a baseline, and against baselines of 5 and 20 runs a case.

    .venv/bin/python benchmarks/until_decided_savings.py [--trials 500]

Exit status 1 when a label differs (the rule promises it never does).
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence

from agent_evals.report.evidence import weigh
from agent_evals.report.sequential import FIRST_ROUND, decide
from benchmarks.gate_statistics import RATES, case

MAX_RUNS = 5
FLAKY = [0.5 + 0.5 * i / 49 for i in range(50)]


def rounds(flat: Sequence[bool], baseline: tuple[int, int] | None, cases: int) -> int:
    runs = min(FIRST_ROUND, MAX_RUNS)
    while runs < MAX_RUNS:
        done = flat[:runs]
        if decide(sum(done), runs - sum(done), 0, max_runs=MAX_RUNS, baseline=baseline, cases=cases).decided:
            break
        runs += 1
    return runs


def label(outcomes: Sequence[bool]) -> str:
    return "flaky" if any(outcomes) and not all(outcomes) else "pass" if all(outcomes) else "fail"


def trial(rng: random.Random, rates: Sequence[float], base_runs: int | None) -> tuple[int, int, int]:
    """(runs until decided, label differences, tier differences)."""
    flats = [[rng.random() < r for _ in range(MAX_RUNS)] for r in rates]
    bases = [sum(rng.random() < r for _ in range(base_runs)) for r in rates] if base_runs else None
    used = [rounds(f, (bases[i], base_runs) if bases else None, len(rates)) for i, f in enumerate(flats)]
    labels = sum(label(f[:n]) != label(f) for f, n in zip(flats, used, strict=True))
    tiers = 0
    if bases is not None:
        def tiers_of(runs: Sequence[int]) -> list[str]:
            pairs = [(case(i, bases[i], base_runs), case(i, sum(f[:n]), n))  # type: ignore[arg-type]
                     for i, (f, n) in enumerate(zip(flats, runs, strict=True))]
            return [c.evidence.tier for c in weigh(pairs).cases]

        tiers = sum(a != b for a, b in zip(tiers_of(used), tiers_of([MAX_RUNS] * len(rates)), strict=True))
    return sum(used), labels, tiers


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=500)
    parser.add_argument("--seed", type=int, default=27)
    args = parser.parse_args(argv)
    ok = True
    for name, rates in (("typical (gate_statistics)", RATES), ("flaky (0.5 to 1.0)", FLAKY)):
        for base in (None, 5, 20):
            rng = random.Random(args.seed)
            results = [trial(rng, rates, base) for _ in range(args.trials)]
            flat = MAX_RUNS * len(rates) * args.trials
            used = sum(r[0] for r in results)
            labels, tiers = sum(r[1] for r in results), sum(r[2] for r in results)
            against = f"baseline {base} runs/case" if base else "no baseline"
            print(f"{name:26} {against:22} runs {used / args.trials:6.1f} of {flat / args.trials:.0f} "
                  f"({1 - used / flat:5.1%} saved); labels differing {labels}, evidence tiers differing {tiers} "
                  f"of {len(rates) * args.trials} cases")
            ok = ok and labels == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
