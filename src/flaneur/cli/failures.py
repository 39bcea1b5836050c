"""How ``flaneur`` reports a failure: one line on stderr and an exit code, never a traceback.

* Usage errors (unknown command or option, missing or malformed values) print the command's
  usage line and one ``error:`` line, exit 2. They are recognised by class name along the
  exception's MRO, so they are caught whichever click a typer release raises (typer 0.29
  bundles its own copy as ``typer._click``; older releases use ``click`` itself).
* :class:`~flaneur.errors.FlaneurError` (bad input, named by file, line or field) and
  operating-system errors naming a path (read-only folder, a file where a folder is
  expected, a full disk) print one ``error:`` line, exit 2.
* Ctrl-C exits 130; a closed pipe (``flaneur ... | head``) exits quietly.
* Anything else is a bug in flaneur: one ``internal error:`` line saying how to get the
  traceback (``FLANEUR_DEBUG=1``), exit 1.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from pathlib import Path
from typing import Any, Protocol, cast

from flaneur.errors import FlaneurError

USAGE_EXIT = 2
ERROR_EXIT = 2
INTERNAL_EXIT = 1
INTERRUPT_EXIT = 130
DEBUG_ENV = "FLANEUR_DEBUG"
"""Set to 1 to let unexpected exceptions raise with their traceback."""


class _ClickError(Protocol):
    """What is used of click's exceptions (of whichever click copy raised them)."""

    def show(self) -> None: ...

    def format_message(self) -> str: ...


def _is(err: BaseException, class_name: str) -> bool:
    return any(cls.__name__ == class_name for cls in type(err).__mro__)


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (newlines included) folded to one space."""
    return " ".join(str(text).split())


def _echo(line: str) -> None:
    with contextlib.suppress(OSError, ValueError):  # stderr closed: nothing left to tell
        print(line, file=sys.stderr, flush=True)


def _usage_line(err: Any) -> str | None:
    ctx = getattr(err, "ctx", None)
    if ctx is None:
        return None
    try:
        return one_line(ctx.get_usage())
    except Exception:
        return None


def describe_os_error(err: OSError) -> str:
    """One line naming the path(s) of an operating-system error and what went wrong."""
    reason = err.strerror or one_line(str(err)) or type(err).__name__
    paths = [p for p in (err.filename, getattr(err, "filename2", None)) if p is not None]
    if not paths:
        return reason
    shown = " -> ".join(
        os.fsdecode(p) if isinstance(p, bytes | os.PathLike) else str(p) for p in paths
    )
    hint = ""
    cache = _cache_root()
    if cache and any(str(p).startswith(cache) for p in paths):
        hint = f" (in the cache folder FLANEUR_CACHE_DIR={cache}; use one you can write to)"
    elif isinstance(err, PermissionError):
        hint = " (choose a folder you can write to)"
    elif isinstance(err, FileExistsError | NotADirectoryError):
        hint = " (a file is in the way of a folder)"
    elif isinstance(err, IsADirectoryError):
        hint = " (a folder, where a file was expected)"
    return f"{shown}: {reason}{hint}"


def _cache_root() -> str | None:
    root = os.environ.get("FLANEUR_CACHE_DIR")
    return os.path.expanduser(root) if root else None


def check_output_path(path: Path, option: str, *, folder: bool) -> None:
    """Refuse, before any work, an output ``path`` that cannot be written: a file where a
    folder is wanted (or the reverse), a file in the way of a parent folder, or a read-only
    parent. Nothing is created. A new bare name holding ``=`` (``-o aria.keep=3``) is taken
    for an option given to the wrong flag and refused.

    Raises
    ------
    FlaneurError
        Naming ``option`` and the path.
    """

    kind = "folder" if folder else "file"
    if path.exists():
        if folder and not path.is_dir():
            raise FlaneurError(f"{option} {path}: exists and is not a folder (choose a new name)")
        if not folder and path.is_dir():
            raise FlaneurError(f"{option} {path}: is a folder, expected a {kind} to write")
        if not os.access(path, os.W_OK):
            raise FlaneurError(f"{option} {path}: not writable (permission denied)")
        return
    if "=" in path.name and len(path.parts) == 1:
        raise FlaneurError(
            f"{option} {path}: looks like an option KEY=VALUE, not a {kind} "
            "(-o is --out in every command; options are --option KEY=VALUE)"
        )
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise FlaneurError(f"{option} {path}: {parent} is a file, not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise FlaneurError(f"{option} {path}: cannot create it, {parent} is not writable")


def report_failure(err: BaseException) -> int:
    """Print ``err`` as flaneur reports it and return the exit code.

    Raises
    ------
    BaseException
        ``err`` itself when it is unexpected and ``FLANEUR_DEBUG`` is set.
    """

    if _is(err, "Abort") and isinstance(err.__cause__, EOFError):
        err = err.__cause__  # typer turns an EOFError into Abort: a truncated read, not Ctrl-C
    if isinstance(err, SystemExit):
        return err.code if isinstance(err.code, int) else (0 if err.code is None else 1)
    if isinstance(err, KeyboardInterrupt) or _is(err, "Abort"):
        _echo("aborted")
        return INTERRUPT_EXIT
    if _is(err, "Exit") and hasattr(err, "exit_code"):
        return int(err.exit_code)
    if _is(err, "NoArgsIsHelpError"):  # `flaneur city`: the group's help, as click prints it
        cast(_ClickError, err).show()
        return USAGE_EXIT
    if _is(err, "ClickException"):
        message = one_line(cast(_ClickError, err).format_message())
        usage = _usage_line(err) if _is(err, "UsageError") else None
        if usage:
            _echo(usage)
        _echo(f"error: {message}")
        return USAGE_EXIT if _is(err, "UsageError") else int(getattr(err, "exit_code", 1) or 1)
    if isinstance(err, FlaneurError):
        _echo(f"error: {one_line(str(err))}")
        return ERROR_EXIT
    if isinstance(err, BrokenPipeError) or (isinstance(err, OSError) and err.errno == errno.EPIPE):
        _quiet_stdout()
        return INTERNAL_EXIT
    if isinstance(err, OSError):
        _echo(f"error: {describe_os_error(err)}")
        return ERROR_EXIT
    if isinstance(err, MemoryError):
        _echo("error: out of memory")
        return INTERNAL_EXIT
    if os.environ.get(DEBUG_ENV, "") not in ("", "0"):
        raise err
    where = _origin(err)
    _echo(
        f"internal error: {type(err).__name__}: {one_line(str(err))}{where} "
        f"(a bug in flaneur; rerun with {DEBUG_ENV}=1 for the traceback)"
    )
    return INTERNAL_EXIT


def _origin(err: BaseException) -> str:
    """`` at FILE:LINE`` of the innermost frame of ``err``'s traceback, if any."""
    tb = err.__traceback__
    if tb is None:
        return ""
    while tb.tb_next is not None:
        tb = tb.tb_next
    return f" at {os.path.basename(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno}"


def _quiet_stdout() -> None:
    """After a closed pipe, point stdout at devnull so that the interpreter's final flush
    does not print a second error."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
