"""Errors raised by the model layer.

All derive from :class:`flaneur.errors.FlaneurError`, so the command line prints them as one
line.  None of them ever carries an API key: messages that come from a server are passed
through :func:`flaneur.models.secrets.redact` before they are stored.
"""

from __future__ import annotations

from flaneur.errors import FlaneurError


class ModelError(FlaneurError):
    """A language-model call failed or a model could not be set up.

    A failed call's error carries ``attempts``: how many requests were sent in all.
    """

    attempts: int  # set on the errors of calls, not on set-up errors


class ModelConfigError(ModelError, ValueError):
    """A model string, base URL, API-key variable or option is wrong or missing."""


class LocalBackendMissing(ModelConfigError, ImportError):
    """An optional local backend (llama-cpp-python) or model package is not installed."""


class ModelHTTPError(ModelError):
    """The server answered with an HTTP error that was not (or no longer) worth retrying.

    Parameters
    ----------
    status
        HTTP status code of the last reply.
    message
        The server's own error message (redacted, shortened).
    url
        The endpoint that was called (never holds credentials).
    attempts
        How many requests were sent in all, retries included.
    """

    def __init__(self, status: int, message: str, *, url: str = "", attempts: int = 1):
        self.status = status
        self.server_message = message
        self.url = url
        self.attempts = attempts
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        where = f" from {url}" if url else ""
        super().__init__(f"HTTP {status}{where}{tries}: {message}")


class ModelContextOverflow(ModelError):
    """The prompt and the tokens asked for its reply do not fit the model's context."""


class ModelTimeoutError(ModelError, TimeoutError):
    """Every attempt of a call ran out of time."""


class ModelConnectionError(ModelError, ConnectionError):
    """The server could not be reached (refused, reset or closed connection)."""


class ModelResponseError(ModelError):
    """The server's reply could not be understood (malformed, truncated or incomplete JSON)."""


class BudgetExceeded(FlaneurError):
    """The run's token budget is spent; the runner should stop cleanly.

    Deliberately not a :class:`ModelError`: a runner that records failed model calls per
    episode should not swallow it.

    Parameters
    ----------
    used
        Tokens (prompt + completion) spent so far in the run.
    budget
        The run's token budget.
    """

    def __init__(self, used: int, budget: int):
        self.used = used
        self.budget = budget
        super().__init__(f"token budget exhausted: {used} tokens used of a budget of {budget}")
