"""Price lookups, dated variants, overrides from LLM_PRICES, unknown models."""

from __future__ import annotations

import logging

import pytest

from agent_evals.llm.pricing import BUILTIN_PRICES, ModelPrice, PriceTable
from agent_evals.llm.types import LLMConfigError


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("gpt-4o", "gpt-4o"),
        ("GPT-4o", "gpt-4o"),
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-4o-mini", "gpt-4o-mini"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),  # the longest entry wins
        ("gpt-4.1-nano-2025-04-14", "gpt-4.1-nano"),
        ("gpt-5-mini", "gpt-5-mini"),
        ("o4-mini-2025-04-16", "o4-mini"),
        ("gpt-4", None),  # not a variant of gpt-4o or gpt-4.1
        ("gpt-4oo", None),
        ("llama3.1:8b", None),
    ],
)
def test_builtin_lookup(name: str, expected: str | None) -> None:
    price = PriceTable().price_for(name)
    assert price == (BUILTIN_PRICES[expected] if expected else None)


def test_cost_is_per_million_tokens() -> None:
    assert PriceTable().cost(1_000_000, 1_000_000, "gpt-4o") == pytest.approx(12.5)
    assert ModelPrice(0.15, 0.60).cost(1000, 100) == pytest.approx(0.00021)


def test_env_overrides_win_and_add_models() -> None:
    table = PriceTable.from_env(
        {"LLM_PRICES": '{"gpt-4o": [1, 2], "my-deployment": [0.5, 0], "llama3": [0, 0]}'}
    )
    assert table.price_for("gpt-4o-2024-08-06") == ModelPrice(1.0, 2.0)
    assert table.price_for("my-deployment") == ModelPrice(0.5, 0.0)
    assert table.price_for("gpt-4o-mini") == BUILTIN_PRICES["gpt-4o-mini"]


def test_names_are_tried_in_order() -> None:
    # ("deployment", "reported model"): a priced deployment name wins over the reported model
    table = PriceTable({"my-dep": ModelPrice(9, 9)})
    assert table.price_for("my-dep", "gpt-4o") == ModelPrice(9, 9)
    assert table.price_for("other-dep", "gpt-4o") == BUILTIN_PRICES["gpt-4o"]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("{not json", "LLM_PRICES is not valid JSON"),
        ("[1, 2]", "LLM_PRICES must be a JSON object"),
        ('{"m": [1]}', "LLM_PRICES['m'] must be [input_per_1m, output_per_1m]"),
        ('{"m": [1, -2]}', "two non-negative numbers, got [1, -2]"),
        ('{"m": ["1", 2]}', "two non-negative numbers"),
        ('{"m": {"input": 1}}', "must be [input_per_1m, output_per_1m]"),
    ],
)
def test_bad_overrides_raise_config_error_with_example(raw: str, message: str) -> None:
    with pytest.raises(LLMConfigError, match=r"expected e\.g\.") as caught:
        PriceTable.from_env({"LLM_PRICES": raw})
    assert message in str(caught.value)


def test_empty_env_value_means_no_overrides() -> None:
    assert PriceTable.from_env({"LLM_PRICES": "  "}).price_for("gpt-4o") == BUILTIN_PRICES["gpt-4o"]


def test_unknown_model_costs_zero_with_one_debug_log(caplog: pytest.LogCaptureFixture) -> None:
    table = PriceTable()
    with caplog.at_level(logging.DEBUG, logger="agent_evals.llm.pricing"):
        costs = [table.cost(100, 100, "llama3.1:8b") for _ in range(3)]
    assert costs == [0.0, 0.0, 0.0]
    assert [r.getMessage() for r in caplog.records] == [
        "no price known for model llama3.1:8b; counting its cost as 0.0 (set LLM_PRICES)"
    ]
