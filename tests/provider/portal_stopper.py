"""A user simulator that stops the portal right before it says it is done (for the error-kind tests)."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Sequence

from agent_evals.conversation.users import BaseUserSimulator, Turn, UserMessage
from agent_evals.processes import pid_alive
from agent_evals.testing.conversations import CONFIRM


class StopsThePortal(BaseUserSimulator):
    """Asks (``request``), confirms once, then stops the portal (``portal_pid``) and ends done."""

    def next_message(self, turns: Sequence[Turn]) -> UserMessage:
        if not turns:
            return UserMessage.say(self.params["request"])
        if len(turns) == 1:
            return UserMessage.say(CONFIRM)
        pid = int(self.params["portal_pid"])
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and pid_alive(pid):
            time.sleep(0.05)
        return UserMessage.stop("done")
