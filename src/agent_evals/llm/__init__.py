"""Chat models: the protocol (`types`), the OpenAI-backed implementations and replay."""
