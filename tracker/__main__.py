from tracker.cli import cli

cli()
