"""Typed agent options: checked against each agent's ``Options`` dataclass before a run.

Options reach an agent from the command line (``-o random.seed=3``), from a run config or
from Python. :func:`check_options` converts each value to its field's declared type (an
integer from ``3``, a float from ``3``, a tuple from a list or a ``"b1,r3"`` string where
the field is a tuple of strings, a ``Literal`` choice) and raises one line naming the agent,
the option and what was expected. :func:`check_requirements` checks an agent's declared
needs (scheme, model, views) against a run's set-up.
"""

from __future__ import annotations

import dataclasses
import inspect
import types
import typing
from dataclasses import dataclass
from typing import Any, Literal, Union

from flaneur.errors import FlaneurError


class _Mismatch(Exception):
    """A value that does not fit a type (internal; turned into a FlaneurError)."""


def describe_type(tp: Any) -> str:
    """What a value of type ``tp`` must be, in words (``"an integer or null"``)."""
    origin = typing.get_origin(tp)
    if origin is Literal:
        return " or ".join(repr(v) for v in typing.get_args(tp))
    if origin in (Union, types.UnionType):
        return " or ".join(describe_type(a) for a in typing.get_args(tp))
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return f"a list of {describe_type(args[0])}"
        return f"a list of {len(args)} ({', '.join(describe_type(a) for a in args)})"
    if tp is type(None):
        return "null"
    names = {int: "an integer", float: "a number", bool: "true/false", str: "text"}
    return names.get(tp, getattr(tp, "__name__", str(tp)))


def coerce(value: Any, tp: Any) -> Any:
    """``value`` converted to type ``tp``; :class:`_Mismatch` when it does not fit."""
    if tp is Any:
        return value
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        for arg in typing.get_args(tp):
            try:
                return coerce(value, arg)
            except _Mismatch:
                continue
        raise _Mismatch
    if origin is Literal:
        if value in typing.get_args(tp):
            return value
        raise _Mismatch
    if origin is tuple:
        args = typing.get_args(tp)
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list | tuple):
            raise _Mismatch
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(coerce(v.strip() if isinstance(v, str) else v, args[0]) for v in items)
        if len(items) != len(args):
            raise _Mismatch
        return tuple(coerce(v, a) for v, a in zip(items, args, strict=True))
    if tp is type(None):
        if value is None:
            return None
        raise _Mismatch
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise _Mismatch
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise _Mismatch
    if tp is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        raise _Mismatch
    if tp is str:
        if isinstance(value, str):
            return value
        raise _Mismatch
    if origin is list:
        (arg,) = typing.get_args(tp) or (Any,)
        if isinstance(value, list | tuple):
            return [coerce(v, arg) for v in value]
        raise _Mismatch
    if isinstance(tp, type):
        if isinstance(value, tp):
            return value
        raise _Mismatch
    return value  # a type this check cannot judge (a protocol, a generic): the agent decides


def option_fields(options_cls: type) -> dict[str, Any]:
    """``{field name: resolved type}`` of an options dataclass."""
    hints = typing.get_type_hints(options_cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(options_cls)}


def options_schema(cls: type) -> type:
    """The options dataclass of an agent class: its declared ``Options``, or, for an agent
    that declares none, one made from its constructor's keyword parameters (their
    annotations and defaults; an agent whose constructor takes ``**kwargs`` accepts any
    option name)."""
    declared = getattr(cls, "Options", None)
    if (
        declared is not None
        and dataclasses.is_dataclass(declared)
        and (dataclasses.fields(declared) or "__init__" not in vars_along_mro(cls))
    ):
        return declared
    init = cls.__init__  # type: ignore[misc]
    try:
        hints = typing.get_type_hints(init)
    except Exception:  # unresolvable annotations: check names only
        hints = {}
    sig = inspect.signature(init)
    spec = []
    for p in list(sig.parameters.values())[1:]:
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            default = None if p.default is p.empty else p.default
            spec.append((p.name, hints.get(p.name, Any), dataclasses.field(default=default)))
    schema = dataclasses.make_dataclass(f"{cls.__name__}Options", spec, frozen=True)
    schema.open = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())  # type: ignore[attr-defined]
    return schema


def vars_along_mro(cls: type) -> set[str]:
    """Names defined in the class bodies of ``cls`` and its bases below :class:`Agent`."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if klass.__name__ == "Agent" and klass.__module__ == "flaneur.agents.base":
            break
        names |= set(vars(klass))
    return names


def check_options(agent: str, options_cls: type, values: dict[str, Any]) -> dict[str, Any]:
    """Check and convert ``values`` against the agent's ``Options`` dataclass.

    Parameters
    ----------
    agent
        The agent's name (for messages).
    options_cls
        Its ``Options`` dataclass.
    values
        Option values by name (from ``-o``, a config or Python).

    Returns
    -------
    dict
        The converted values (only those given).

    Raises
    ------
    FlaneurError
        One line: an option the agent does not have (listing its options), a value of the
        wrong type (saying what was expected), or a value the dataclass rejects.
    """
    fields = option_fields(options_cls)
    if getattr(options_cls, "open", False):  # a constructor with **kwargs checks the rest
        fields.update({k: Any for k in values if k not in fields})
    unknown = sorted(set(values) - set(fields))
    if unknown:
        takes = f"its options: {', '.join(fields)}" if fields else "it takes none"
        raise FlaneurError(f"agent {agent!r} has no option {', '.join(unknown)} ({takes})")
    out: dict[str, Any] = {}
    for key, value in values.items():
        try:
            out[key] = coerce(value, fields[key])
        except _Mismatch:
            raise FlaneurError(
                f"agent {agent!r}: option {key}={value!r} must be {describe_type(fields[key])}"
            ) from None
    try:
        options_cls(**out)  # the dataclass's own checks (__post_init__)
    except (FlaneurError, TypeError, ValueError) as err:
        raise FlaneurError(f"agent {agent!r}: {err}") from None
    return out


@dataclass(frozen=True)
class RunSetup:
    """What a run provides agents, as far as their needs are concerned.

    Attributes
    ----------
    scheme
        The action scheme of the task set.
    llm, views, landmarks
        The ``--llm``, ``--views`` and ``--landmarks`` values (``None`` when not given).
    """

    scheme: str
    llm: str | None = None
    views: str | None = None
    landmarks: str | None = None


def check_requirements(
    agent: str,
    cls: Any,
    *,
    scheme: str,
    has_model: bool,
    has_views: bool,
    options: dict[str, Any] | None = None,
    landmarks: str | None = None,
) -> None:
    """Raise one line when an agent's declared needs do not fit the run's set-up.

    Parameters
    ----------
    agent
        The agent's name.
    cls
        Its class (``schemes``, ``needs_model``, ``needs_views`` and the ``check_setup``
        class method for needs that depend on its options).
    scheme
        The scheme a task set runs in.
    has_model, has_views
        Whether the run has ``--llm`` / ``--views``.
    options
        The agent's options in this run.
    landmarks
        The run's ``--landmarks`` value.
    """
    schemes = tuple(getattr(cls, "schemes", ()))
    if schemes and scheme not in schemes:
        raise FlaneurError(
            f"agent {agent!r} acts in the {' or '.join(schemes)} scheme, not {scheme!r}: "
            f"add --scheme {schemes[0]}"
        )
    if getattr(cls, "needs_model", False) and not has_model:
        raise FlaneurError(f"agent {agent!r} needs a language model: add --llm")
    if getattr(cls, "needs_views", False) and not has_views:
        raise FlaneurError(f"agent {agent!r} needs street-level views: add --views")
    check_setup = getattr(cls, "check_setup", None)
    if check_setup is not None:
        llm = "llm" if has_model else None
        setup = RunSetup(scheme, llm, "views" if has_views else None, landmarks)
        try:
            check_setup(dict(options or {}), setup)
        except FlaneurError as err:
            raise FlaneurError(f"agent {agent!r}: {err}") from None


__all__ = [
    "RunSetup",
    "check_options",
    "check_requirements",
    "coerce",
    "describe_type",
    "option_fields",
    "options_schema",
]
