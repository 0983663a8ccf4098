"""Golden conversations: plans of well-behaved conversations, recorded as replayable cassettes."""
