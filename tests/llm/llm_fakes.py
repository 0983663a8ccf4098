"""Small fakes shared by the LLM tests (a uniquely named module, imported by name)."""

from __future__ import annotations


class RecordedSleeps:
    """An injectable ``sleep`` that returns at once and remembers the waits."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
