"""Cost of a call from token counts: a small built-in price table plus ``LLM_PRICES``.

Prices are USD per 1M tokens (input, output). The built-in table is **approximate**:
OpenAI list prices, standard tier, as of :data:`PRICES_AS_OF`; cached-input discounts,
batch and regional (Azure data-zone) prices are ignored. Override or extend it with the
environment variable ``LLM_PRICES``, a JSON object ``{"model": [input_per_1m,
output_per_1m]}`` — e.g. for an Azure deployment name or a local model (price 0).

A name matches a table entry exactly (case-insensitive) or as a dated or suffixed
variant: ``gpt-4o-2024-08-06`` uses ``gpt-4o``; the longest matching entry wins, so
``gpt-4o-mini-2024-07-18`` uses ``gpt-4o-mini``. Unknown models cost 0.0 (one debug
log per name).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from agent_evals.llm.types import LLMConfigError

log = logging.getLogger(__name__)

PRICES_ENV = "LLM_PRICES"
PRICES_AS_OF = "2025-08"


@dataclass(frozen=True)
class ModelPrice:
    """USD per 1M input (prompt) and output (completion) tokens."""

    input_per_1m: float
    output_per_1m: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        total = prompt_tokens * self.input_per_1m + completion_tokens * self.output_per_1m
        return round(total / 1_000_000, 8)


#: Approximate list prices (USD per 1M tokens), see PRICES_AS_OF.
BUILTIN_PRICES: Mapping[str, ModelPrice] = {
    "gpt-4o": ModelPrice(2.50, 10.00),
    "gpt-4o-mini": ModelPrice(0.15, 0.60),
    "gpt-4.1": ModelPrice(2.00, 8.00),
    "gpt-4.1-mini": ModelPrice(0.40, 1.60),
    "gpt-4.1-nano": ModelPrice(0.10, 0.40),
    "o3": ModelPrice(2.00, 8.00),
    "o3-mini": ModelPrice(1.10, 4.40),
    "o4-mini": ModelPrice(1.10, 4.40),
    "gpt-5": ModelPrice(1.25, 10.00),
    "gpt-5-mini": ModelPrice(0.25, 2.00),
    "gpt-5-nano": ModelPrice(0.05, 0.40),
}


class PriceTable:
    """Looks up prices in the built-in table merged with overrides (an override replaces an entry)."""

    def __init__(
        self,
        overrides: Mapping[str, ModelPrice] | None = None,
        builtin: Mapping[str, ModelPrice] = BUILTIN_PRICES,
    ) -> None:
        self._prices = {**_lower_keys(builtin), **_lower_keys(overrides or {})}
        self._unknown_logged: set[str] = set()
        self._lock = threading.Lock()

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> PriceTable:
        """Built-in prices overridden by ``LLM_PRICES``; a bad value raises LLMConfigError."""
        raw = env.get(PRICES_ENV, "").strip()
        return cls(parse_price_overrides(raw) if raw else None)

    def price_for(self, *names: str | None) -> ModelPrice | None:
        """The price of the first of ``names`` that matches an entry (see the module docstring)."""
        for name in names:
            price = _match(self._prices, name.lower()) if name else None
            if price is not None:
                return price
        return None

    def cost(self, prompt_tokens: int, completion_tokens: int, *names: str | None) -> float:
        """USD for one call; 0.0 (and one debug log per name) when no name is priced."""
        price = self.price_for(*names)
        if price is not None:
            return price.cost(prompt_tokens, completion_tokens)
        key = " / ".join(n for n in names if n) or "<unnamed>"
        with self._lock:
            first = key not in self._unknown_logged
            self._unknown_logged.add(key)
        if first:
            log.debug("no price known for model %s; counting its cost as 0.0 (set %s)", key, PRICES_ENV)
        return 0.0


def parse_price_overrides(text: str) -> dict[str, ModelPrice]:
    """Parse ``LLM_PRICES``: ``{"model": [input_per_1m, output_per_1m], ...}``."""
    example = f"{PRICES_ENV}='{{\"my-deployment\": [2.5, 10.0]}}'"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LLMConfigError(f"{PRICES_ENV} is not valid JSON ({exc.msg}); expected e.g. {example}") from None
    if not isinstance(data, dict):
        raise LLMConfigError(f"{PRICES_ENV} must be a JSON object; expected e.g. {example}")
    prices: dict[str, ModelPrice] = {}
    for model, pair in data.items():
        if not (
            isinstance(pair, list)
            and len(pair) == 2
            and all(isinstance(p, int | float) and not isinstance(p, bool) and p >= 0 for p in pair)
        ):
            raise LLMConfigError(
                f"{PRICES_ENV}[{model!r}] must be [input_per_1m, output_per_1m] with two non-negative "
                f"numbers, got {json.dumps(pair)}; expected e.g. {example}"
            )
        prices[model] = ModelPrice(float(pair[0]), float(pair[1]))
    return prices


def _lower_keys(prices: Mapping[str, ModelPrice]) -> dict[str, ModelPrice]:
    return {name.lower(): price for name, price in prices.items()}


def _match(table: Mapping[str, ModelPrice], name: str) -> ModelPrice | None:
    if name in table:
        return table[name]
    prefixes = [key for key in table if name.startswith(key + "-")]
    return table[max(prefixes, key=len)] if prefixes else None
