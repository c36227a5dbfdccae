"""Help text a person reads: each argument named by its metavar, never by a Python type.

typer 0.29 prints an argument's Python annotation after its name in ``--help``
(``RUN_DIR <list[Path]>``); options are given a metavar and print none. :class:`PlainGroup` is the
group class of every typer application of the command line: each command it hands out shows its
arguments the way its options already are, by the metavar alone (``RUN_DIR...``).
"""

from __future__ import annotations

from typer import _click  # typer vendors its own click: its Context and Command
from typer.core import TyperArgument, TyperGroup

__all__ = ["PlainGroup"]


class _PlainArgument(TyperArgument):
    """An argument whose help line carries its metavar, and ``...`` when it takes several."""

    def display_type(self, ctx: _click.Context) -> str:
        """Return no type label: the metavar already says what to give."""
        return ""

    def display_type_rich(self, ctx: _click.Context) -> str | None:
        """Return no type label (the rich help's column), as :meth:`display_type`."""
        return None

    def _rich_display_name(self) -> str:
        return self.display_name_raw + ("..." if self.nargs != 1 else "")


class PlainGroup(TyperGroup):
    """A typer group whose commands name their arguments by metavar alone (see the module)."""

    def get_command(self, ctx: _click.Context, cmd_name: str) -> _click.Command | None:
        """Return the command ``cmd_name``, its arguments shown as :class:`_PlainArgument`."""
        command = super().get_command(ctx, cmd_name)
        for param in command.params if command is not None else ():
            if type(param) is TyperArgument:
                param.__class__ = _PlainArgument
        return command
