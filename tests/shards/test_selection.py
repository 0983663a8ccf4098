"""The flags that make Promptfoo run exactly a shard's tests: a pattern of their exact descriptions
(checked with Node's RegExp, as Promptfoo builds it), the user's own pattern, range and first-n
replaced, every JSON output named for the shard."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from agent_evals.shards.selection import description_pattern, json_outputs, rewrite_flags, shard_args
from agent_evals.suites.shard_spec import Shard
from tests.conftest import PROJECT_ROOT

NODE = PROJECT_ROOT / "node_modules" / ".bin" / "node"
DESCRIPTIONS = [
    "C01 copy crm-dev-neu to West Europe",
    "C02 a (tricky) one? [yes] {no} a+b* $5 ^up | down / slash \\ back",
    "C03 Spoke create — the em dash and ünïcode",
    "C1",
]
OTHERS = ["C01 copy crm-dev-neu to West Europe, again", "xC1", "C10", "C02 a (tricky) one"]


def test_the_pattern_matches_exactly_the_descriptions_in_python() -> None:
    pattern = re.compile(description_pattern(DESCRIPTIONS))
    assert all(pattern.search(d) for d in DESCRIPTIONS)
    assert not any(pattern.search(d) for d in OTHERS)


@pytest.mark.skipif(not NODE.exists(), reason="npm packages not installed")
def test_the_pattern_matches_exactly_the_descriptions_in_javascript() -> None:
    script = (
        "const [p, yes, no] = JSON.parse(process.argv[1]); const r = new RegExp(p);"  # as Promptfoo's filterTests
        "console.log(JSON.stringify([yes.map(d => r.test(d)), no.map(d => r.test(d))]))"
    )
    argument = json.dumps([description_pattern(DESCRIPTIONS), DESCRIPTIONS, OTHERS])
    done = subprocess.run([str(NODE), "-e", script, argument], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == [[True] * len(DESCRIPTIONS), [False] * len(OTHERS)]


def test_the_users_filters_give_way_to_the_shards_pattern() -> None:
    args = ["--filter-pattern", "C0", "--filter-range=0:5", "-n", "3", "--filter-metadata", "priority=smoke",
            "-j", "4", "--repeat", "3"]
    out = shard_args(args, "^(?:x)$", Shard(2, 4))
    assert out == ["--filter-metadata", "priority=smoke", "-j", "4", "--repeat", "3",
                   "-o", "results/{suite}.shard-2-of-4.json", "--filter-pattern", "^(?:x)$"]


def test_json_outputs_are_named_for_the_shard_and_others_kept() -> None:
    out = shard_args(["-o", "r/{suite}.json", "r/{suite}.html", "--no-cache", "--output=x.json"], "^$", Shard(1, 2))
    assert out == ["-o", "r/{suite}.shard-1-of-2.json", "r/{suite}.html", "--no-cache",
                   "-o", "x.shard-1-of-2.json", "--filter-pattern", "^$"]
    assert json_outputs(out) == ["r/{suite}.shard-1-of-2.json", "x.shard-1-of-2.json"]


def test_flags_are_dropped_with_their_values_and_outputs_renamed_in_place() -> None:
    args = ["-j", "2", "--repeat=3", "-o", "a.json", "b.html", "--filter-pattern", "-x-", "--no-cache",
            "--output=c.json", "--description", "mine"]
    assert rewrite_flags(args, ("--repeat", "--filter-pattern", "--description")) == [
        "-j", "2", "-o", "a.json", "b.html", "--no-cache", "--output=c.json"]
    assert rewrite_flags(args, ("-o", "--output", "--repeat")) == [
        "-j", "2", "--filter-pattern", "-x-", "--no-cache", "--description", "mine"]
    assert rewrite_flags(args, (), lambda paths: [p.upper() for p in paths]) == [
        "-j", "2", "--repeat=3", "-o", "A.JSON", "B.HTML", "--filter-pattern", "-x-", "--no-cache", "-o", "C.JSON",
        "--description", "mine"]
