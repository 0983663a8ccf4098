"""Memory of one provider worker over many conversations: RSS after N vs after the warm-up.

One Python process calls ``call_api`` in a loop, as a Promptfoo Python worker does, with
the three-turn conversation of ``provider_support``:

* ``replay`` — served from a cassette recorded once (no model; the tools run for real);
* ``live`` — the scripted models over HTTP (a new OpenAI client per conversation).

RSS (``/proc/self/statm``) is taken after ``--warmup`` conversations and after
``--conversations``. Target: growth below 20 %.

    .venv/bin/python benchmarks/provider_memory.py [--conversations 100] [--warmup 5] [--mode both]

Exit status 1 when a mode grows beyond the target or a conversation fails.
"""

from __future__ import annotations

import argparse
import gc
import sys

from provider_support import bench_environment, context, rss_bytes

from agent_evals.provider.run import call_api

TARGET_GROWTH = 0.20
MB = 1024 * 1024


def run_mode(mode: str, options: dict, conversations: int, warmup: int) -> bool:
    warm = 0
    for number in range(1, conversations + 1):
        result = call_api("", options, context(f"mem-{mode}-{number}"))
        if result.get("error"):
            print(f"{mode}: conversation {number} failed: {result['error']}")
            return False
        if number == warmup:
            gc.collect()
            warm = rss_bytes()
    gc.collect()
    final = rss_bytes()
    growth = (final - warm) / warm
    verdict = "ok" if growth < TARGET_GROWTH else "TOO MUCH"
    print(f"{mode}: RSS after {warmup} conversations {warm / MB:.1f} MB, after {conversations} {final / MB:.1f} MB, "
          f"growth {growth * 100:+.1f} % (target < {TARGET_GROWTH * 100:.0f} %): {verdict}")
    return growth < TARGET_GROWTH


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--mode", choices=("replay", "live", "both"), default="both")
    args = parser.parse_args()
    ok = True
    with bench_environment() as bench:
        if args.mode in ("live", "both"):
            ok &= run_mode("live", {"config": {}}, args.conversations, args.warmup)
        if args.mode in ("replay", "both"):
            recorded = call_api("", {"config": {"record": str(bench.folder)}}, context("mem-record"))
            if recorded.get("error"):
                print(f"recording failed: {recorded['error']}")
                return 1
            ok &= run_mode("replay", {"config": {"replay": str(bench.folder)}}, args.conversations, args.warmup)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
