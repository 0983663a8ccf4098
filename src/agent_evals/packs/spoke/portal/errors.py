"""The portal's exceptions.

``CallerError`` is the base of the errors a caller (agent, REST client) can cause and
should see; each maps to one HTTP status and becomes a tool error result over MCP (what a
client of the portal raises, ``api.PortalError``, is the core's ``SystemFailure`` family):

* ``InvalidInputError`` (400): a malformed argument, e.g. an unsafe spoke name.
* ``NotFoundError`` (404): an unknown spoke, pull request or document.
* ``ConflictError`` (409): the request contradicts the current state, e.g. abandoning
  a completed pull request or completing one whose validation failed.

Configuration and environment problems raise at startup instead, with a message that
says what to fix: ``SettingsError`` (bad settings file) and ``DataDirError`` (a data
dir that cannot be used). ``GitError`` is a failed git command: a bug or a broken
repository, never the caller's fault.
"""

from __future__ import annotations


class CallerError(Exception):
    """An error the caller caused; ``status`` is its HTTP status code."""

    status = 400


class InvalidInputError(CallerError):
    status = 400


class NotFoundError(CallerError):
    status = 404


class ConflictError(CallerError):
    status = 409


class SettingsError(ValueError):
    """The customer settings file is unreadable or invalid."""


class DataDirError(RuntimeError):
    """The data dir cannot be used (not a portal data dir, locked by another portal, ...)."""


class GitError(RuntimeError):
    """A git command failed."""
