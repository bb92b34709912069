"""The command line (`python -m rose_core …`): `main` parses and dispatches (`cli.main`), the SGP sub-commands
live in `cli.sgp`, what both share (the progress bar, a model run's summary) in `cli.progress`."""
from .main import build_parser, main

__all__ = ["build_parser", "main"]
