"""Groups of flags declared once and shared by several commands.

A group is a frozen dataclass whose fields carry their Typer option in ``Annotated``.
:func:`with_flags` adds the fields of each group to a command's signature (Typer builds its
options from the signature), and calls the command with one instance per group instead of the
loose values.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import fields
from typing import Any

__all__ = ["with_flags"]


def with_flags(**groups: type[Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a command taking ``name: Group`` parameters with each group's flags.

    ``@with_flags(flags=SheetFlags)`` replaces the command's ``flags`` parameter by every
    field of ``SheetFlags`` (keyword-only, with its default), and rebuilds the instance when
    the command runs. Field names must not repeat the command's own parameters.
    """

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        own = inspect.signature(command, eval_str=True)
        added: list[inspect.Parameter] = []
        names: dict[str, tuple[str, ...]] = {}
        for group_name, group in groups.items():
            hints = inspect.get_annotations(group, eval_str=True)
            members = fields(group)
            names[group_name] = tuple(member.name for member in members)
            added += [
                inspect.Parameter(
                    member.name,
                    inspect.Parameter.KEYWORD_ONLY,
                    default=member.default,
                    annotation=hints[member.name],
                )
                for member in members
            ]
        kept = [p for p in own.parameters.values() if p.name not in groups]
        clash = {p.name for p in kept} & {p.name for p in added}
        if clash:
            raise TypeError(f"{command.__name__}: flags declared twice: {sorted(clash)}")

        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for group_name, group in groups.items():
                values = {name: kwargs.pop(name) for name in names[group_name]}
                kwargs[group_name] = group(**values)
            return command(*args, **kwargs)

        parameters = [*kept, *added]
        wrapper.__signature__ = own.replace(parameters=parameters)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in parameters}
        return wrapper

    return decorate
