"""The command line (`python -m rose_core …`): `main` parses and dispatches (`cli.main`), the SGP sub-commands
live in `cli.sgp`, `study` in `cli.study` with its further sub-commands in `cli.simulate` (`study simulate`),
`cli.approvals` (`study approvals`) and `cli.manage` (`study delete | exclude | include | mark-test`), `plan` in
`cli.plan` (the planning itself in `analysis.plan`); what they share (the progress bar, a model run's summary) in
`cli.progress`."""
from .main import build_parser, main

__all__ = ["build_parser", "main"]
