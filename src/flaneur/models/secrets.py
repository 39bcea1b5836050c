"""Keep API keys out of reprs, logs, errors and caches.

The key is read from the environment only, wrapped in :class:`Secret` (whose ``repr`` and
``str`` are masked), and every text that comes back from a server is passed through
:func:`redact` before it is logged or put into an exception.
"""

from __future__ import annotations

import os

from flaneur.models.errors import ModelConfigError

_MASK = "***"
_LOCAL_PLACEHOLDER = "EMPTY"


class Secret:
    """A credential whose value is shown only to the HTTP layer.

    Parameters
    ----------
    value
        The secret text.
    source
        Where it came from (e.g. the environment variable's name), safe to show.
    """

    __slots__ = ("_value", "source")

    def __init__(self, value: str, source: str = ""):
        self._value = value
        self.source = source

    def reveal(self) -> str:
        """Return the secret text (for building the ``Authorization`` header only)."""
        return self._value

    @property
    def is_placeholder(self) -> bool:
        """True for the ``EMPTY`` placeholder that local servers accept."""
        return self._value in ("", _LOCAL_PLACEHOLDER)

    def redact(self, text: str) -> str:
        """Return ``text`` with every occurrence of the secret masked."""
        if self.is_placeholder or len(self._value) < 4:
            return text
        return text.replace(self._value, _MASK)

    def __repr__(self) -> str:
        return f"Secret({_MASK}, source={self.source!r})"

    __str__ = __repr__

    def __reduce__(self):  # never pickle the value
        raise TypeError("a Secret cannot be pickled")


def api_key_from_env(env_var: str | None, *, required: bool) -> Secret:
    """Read an API key from the environment.

    Parameters
    ----------
    env_var
        Name of the variable that holds the key (``OPENAI_API_KEY`` when ``None``).
    required
        If true (hosted APIs), a missing or empty variable is an error; otherwise (local
        servers) the placeholder ``EMPTY`` is used.

    Returns
    -------
    Secret
        The key, masked.

    Raises
    ------
    ModelConfigError
        If the key is required and the variable is unset or empty.
    """
    name = env_var or "OPENAI_API_KEY"
    value = os.environ.get(name, "").strip()
    if not value:
        if required:
            raise ModelConfigError(
                f"environment variable {name} is not set; export your API key there "
                "(or name another variable with --api-key-env)"
            )
        return Secret(_LOCAL_PLACEHOLDER, source="placeholder")
    return Secret(value, source=name)


def redact(text: str, secret: Secret | None) -> str:
    """Mask ``secret`` inside ``text`` (no-op without a secret)."""
    return text if secret is None else secret.redact(text)
