"""Typed options of every plug-in that a run builds by name (agents, planners, detectors,
recognisers, answerers), checked against the plug-in's ``Options`` dataclass before a run.

Options reach a plug-in from the command line (``--option aria.radius_m=300``, ``flaneur virl aria
FILE keep=3``), from a persona or task file, or from Python. :func:`check_options` converts
each value to its field's declared type (an integer from ``3``, a float from ``3``, a tuple
from a list or a ``"b1,r3"`` string where the field is a tuple of strings, a ``Literal``
choice), checks declared ranges (``Annotated[int, Range(1, 50)]``) and rejects NaN and
infinite numbers; it raises one line naming the plug-in, the option and what was expected,
and for an unknown key lists the valid ones.

An options dataclass documents each field with :func:`option` (its default and a help line),
which ``flaneur agents NAME`` prints::

    @dataclass(frozen=True)
    class Options:
        radius_m: Annotated[float, Range(10, 5000)] = option(500.0, "search radius in metres")
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import types
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, cast

from flaneur.errors import FlaneurError


class _Mismatch(Exception):
    """A value that does not fit a type (internal; turned into a FlaneurError)."""


@dataclass(frozen=True)
class NoOptions:
    """The options of a plug-in that takes none."""


@dataclass(frozen=True)
class Range:
    """Inclusive bounds of a numeric option, given as ``Annotated[int, Range(lo, hi)]``.

    Attributes
    ----------
    lo, hi
        Smallest and largest allowed value (``None``: unbounded on that side).
    """

    lo: float | None = None
    hi: float | None = None

    def admits(self, value: float) -> bool:
        """Whether ``value`` lies inside the bounds."""
        return (self.lo is None or value >= self.lo) and (self.hi is None or value <= self.hi)

    def describe(self) -> str:
        """``"from 1 to 50"``, ``"at least 0"`` or ``"at most 9"``."""
        if self.lo is not None and self.hi is not None:
            return f"from {self.lo:g} to {self.hi:g}"
        if self.lo is not None:
            return f"at least {self.lo:g}"
        return f"at most {self.hi:g}" if self.hi is not None else "any value"


def option(default: Any, help: str = "", **kwargs: Any) -> Any:
    """A dataclass field with ``default`` and a ``help`` line (shown by ``flaneur agents``).

    A mutable default (list, dict) is given as a factory automatically.
    """
    metadata = {"help": help} if help else {}
    if isinstance(default, list | dict | set):
        value = default
        return dataclasses.field(
            default_factory=lambda: type(value)(value), metadata=metadata, **kwargs
        )
    return dataclasses.field(default=default, metadata=metadata, **kwargs)


def _split_annotated(tp: Any) -> tuple[Any, Range | None]:
    if typing.get_origin(tp) is Annotated:
        base, *extras = typing.get_args(tp)
        bounds = next((e for e in extras if isinstance(e, Range)), None)
        return base, bounds
    return tp, None


def describe_type(tp: Any) -> str:
    """What a value of type ``tp`` must be, in words (``"an integer from 1 to 50"``)."""
    tp, bounds = _split_annotated(tp)
    suffix = f" {bounds.describe()}" if bounds is not None else ""
    origin = typing.get_origin(tp)
    if origin is Literal:
        return " or ".join(repr(v) for v in typing.get_args(tp))
    if origin in (Union, types.UnionType):
        return " or ".join(describe_type(a) for a in typing.get_args(tp)) + suffix
    if origin is dict:
        key_type, value_type = typing.get_args(tp) or (Any, Any)
        return f"a table of {describe_type(key_type)} to {describe_type(value_type)}"
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return f"a list of {describe_type(args[0])}"
        return f"a list of {len(args)} ({', '.join(describe_type(a) for a in args)})"
    if tp is type(None):
        return "null"
    names = {int: "an integer", float: "a number", bool: "true/false", str: "text"}
    return names.get(tp, getattr(tp, "__name__", str(tp))) + suffix


def _number(value: Any, tp: type) -> Any:
    """``value`` as an int or a finite float (``_Mismatch`` otherwise)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Mismatch
    if isinstance(value, float) and not math.isfinite(value):
        raise _Mismatch  # NaN and infinities are never a usable setting
    if tp is int:
        if isinstance(value, float) and not value.is_integer():
            raise _Mismatch
        return int(value)
    return float(value)


def coerce(value: Any, tp: Any) -> Any:
    """``value`` converted to type ``tp``; :class:`_Mismatch` when it does not fit."""
    tp, bounds = _split_annotated(tp)
    out = _coerce(value, tp)
    if bounds is not None and isinstance(out, int | float) and not bounds.admits(out):
        raise _Mismatch
    return out


def _coerce(value: Any, tp: Any) -> Any:
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
        if any(value == a and type(value) is type(a) for a in typing.get_args(tp)):
            return value
        raise _Mismatch
    if origin is tuple:
        return _coerce_tuple(value, typing.get_args(tp))
    if tp is type(None):
        if value is None:
            return None
        raise _Mismatch
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise _Mismatch
    if tp in (int, float):
        return _number(value, tp)
    if tp is str:
        if isinstance(value, str):
            return value
        raise _Mismatch
    if origin is list:
        (arg,) = typing.get_args(tp) or (Any,)
        if isinstance(value, list | tuple):
            return [coerce(v, arg) for v in value]
        raise _Mismatch
    if origin is dict:
        key_type, value_type = typing.get_args(tp) or (Any, Any)
        if isinstance(value, dict):
            return {coerce(k, key_type): coerce(v, value_type) for k, v in value.items()}
        raise _Mismatch
    if isinstance(tp, type):
        if isinstance(value, tp):
            return value
        raise _Mismatch
    return value  # a type this check cannot judge (a protocol, a generic): the plug-in decides


def _coerce_tuple(value: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list | tuple):
        raise _Mismatch
    if len(args) == 2 and args[1] is Ellipsis:
        return tuple(coerce(v.strip() if isinstance(v, str) else v, args[0]) for v in items)
    if len(items) != len(args):
        raise _Mismatch
    return tuple(coerce(v, a) for v, a in zip(items, args, strict=True))


def option_fields(options_cls: type) -> dict[str, Any]:
    """``{field name: resolved type}`` of an options dataclass (``Annotated`` kept)."""
    hints = typing.get_type_hints(options_cls, include_extras=True)
    return {f.name: hints[f.name] for f in dataclasses.fields(options_cls)}


def option_help(options_cls: type) -> dict[str, str]:
    """``{field name: help line}`` of an options dataclass (empty where none was given)."""
    return {f.name: str(f.metadata.get("help", "")) for f in dataclasses.fields(options_cls)}


def field_default(f: dataclasses.Field[Any]) -> Any:
    """A field's default value (calling its factory), ``None`` when it has none."""
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return None


def options_schema(cls: type[Any]) -> type:
    """The options dataclass of a plug-in class: its declared ``Options``, or, for a class
    that declares none, one made from its constructor's keyword parameters (their
    annotations and defaults; a constructor that takes ``**kwargs`` accepts any option
    name)."""
    declared = getattr(cls, "Options", None)
    if (
        declared is not None
        and dataclasses.is_dataclass(declared)
        and (dataclasses.fields(declared) or "__init__" not in vars_below_interface(cls))
    ):
        return cast(type, declared)  # the Options class (is_dataclass narrows to class or instance)
    init = cls.__init__
    try:
        hints = typing.get_type_hints(init, include_extras=True)
    except Exception:  # unresolvable annotations: check names only
        hints = {}
    sig = inspect.signature(init)
    spec = []
    for p in list(sig.parameters.values())[1:]:
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            default = None if p.default is p.empty else p.default
            spec.append((p.name, hints.get(p.name, Any), dataclasses.field(default=default)))
    schema: Any = dataclasses.make_dataclass(f"{cls.__name__}Options", spec, frozen=True)
    schema.open = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
    return schema


def vars_below_interface(cls: type) -> set[str]:
    """Names defined in the class bodies of ``cls`` and its bases below the interface class
    (the first base whose body sets ``interface_base = True``: ``Agent``, ``Planner``)."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if vars(klass).get("interface_base") is True or klass is object:
            break
        names |= set(vars(klass))
    return names


def check_options(
    owner: str, options_cls: type, values: dict[str, Any], *, what: str = "agent"
) -> dict[str, Any]:
    """Check and convert ``values`` against a plug-in's ``Options`` dataclass.

    Parameters
    ----------
    owner
        The plug-in's name (for messages).
    options_cls
        Its ``Options`` dataclass.
    values
        Option values by name (from ``--option``, a file or Python).
    what
        What the plug-in is, for messages (``"agent"``, ``"detector"``).

    Returns
    -------
    dict
        The converted values (only those given).

    Raises
    ------
    FlaneurError
        One line: an option the plug-in does not have (listing its options), a value of the
        wrong type or outside its range (saying what was expected), or a value the
        dataclass rejects.
    """
    fields = option_fields(options_cls)
    if getattr(options_cls, "open", False):  # a constructor with **kwargs checks the rest
        fields.update({k: Any for k in values if k not in fields})
    unknown = sorted(set(values) - set(fields))
    if unknown:
        takes = f"its options: {', '.join(fields)}" if fields else "it takes none"
        raise FlaneurError(f"{what} {owner!r} has no option {', '.join(unknown)} ({takes})")
    out: dict[str, Any] = {}
    for key, value in values.items():
        try:
            out[key] = coerce(value, fields[key])
        except _Mismatch:
            raise FlaneurError(
                f"{what} {owner!r}: option {key}={value!r} must be {describe_type(fields[key])}"
            ) from None
    try:
        options_cls(**out)  # the dataclass's own checks (__post_init__)
    except (FlaneurError, TypeError, ValueError) as err:
        raise FlaneurError(f"{what} {owner!r}: {err}") from None
    return out


def describe_options(cls: type) -> dict[str, dict[str, Any]]:
    """``{option: {"type", "default", "help"}}`` of a plug-in class (or of an options
    dataclass itself), for listings."""
    is_schema = dataclasses.is_dataclass(cls) and not hasattr(cls, "Options")
    schema = cls if is_schema else options_schema(cls)
    kinds = option_fields(schema)
    helps = option_help(schema) if dataclasses.is_dataclass(schema) else {}
    return {
        f.name: {
            "type": describe_type(kinds[f.name]),
            "default": field_default(f),
            "help": helps.get(f.name, ""),
        }
        for f in dataclasses.fields(schema)
    }


__all__ = [
    "NoOptions",
    "Range",
    "check_options",
    "coerce",
    "describe_options",
    "describe_type",
    "field_default",
    "option",
    "option_fields",
    "option_help",
    "options_schema",
]
