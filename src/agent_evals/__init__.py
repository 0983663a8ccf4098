"""agent-evals: an evaluation kit for tool-calling agents, plugged into Promptfoo."""

__version__ = "0.1.0"
