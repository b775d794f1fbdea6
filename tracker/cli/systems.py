"""``tracker systems``: the stored systems across rounds, and aliases for renamed ones."""

from __future__ import annotations

import sys

import click
from rich.console import Console
from rich.table import Table

from tracker.cli.common import open_store
from tracker.text_safety import terminal_text

__all__ = ["systems"]


@click.group(invoke_without_command=True)
@click.pass_context
def systems(ctx: click.Context) -> None:
    """The systems stored, one per submitter and name (and division unless closed).

    A system's description (accelerator, counts, host CPU) is that of each round
    it has results in. A system renamed between rounds is linked to the one it
    is with `tracker systems alias`.

    \b
    Example:
        tracker systems
        tracker systems alias "Dell/XE9680_H200" "Dell/XE9680_H200_SXM_141GBx8_TRT"
    """
    if ctx.invoked_subcommand is not None:
        return
    with open_store(ctx, create=False) as store:
        found = store.list_systems()
    table = Table(title=f"{len(found)} systems")
    for column in ("system", "division", "versions", "results", "aliases"):
        table.add_column(column)
    for s in found:
        table.add_row(
            terminal_text(s.key),
            terminal_text(s.division or ""),
            terminal_text(", ".join(s.versions)),
            str(s.results),
            terminal_text(", ".join(s.aliases)),
        )
    Console(width=None if sys.stdout.isatty() else 200).print(table)


@systems.command("alias")
@click.argument("alias_key")
@click.argument("key")
@click.pass_context
def systems_alias(ctx: click.Context, alias_key: str, key: str) -> None:
    """Record that the system ALIAS_KEY is the system KEY (submitter/name, as listed).

    What is stored under ALIAS_KEY moves to KEY (a round KEY describes already
    keeps its own description), and later ingests of ALIAS_KEY land on KEY, so
    the system's series run across the rename. Run `tracker analyze` afterwards.

    \b
    Example:
        tracker systems alias "Dell/XE9680_H200" "Dell/XE9680_H200_SXM_141GBx8_TRT"
    """
    with open_store(ctx, create=False) as store:
        done = store.alias_system(alias_key, key)
    moved = f"{done.results_moved} results and {done.descriptions_moved} round descriptions"
    if done.renamed:
        click.echo(f"{terminal_text(alias_key)} renamed to {terminal_text(key)}")
    else:
        click.echo(f"{terminal_text(alias_key)} is now an alias of {terminal_text(key)}: {moved}")
