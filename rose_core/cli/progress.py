"""What every command of the CLI shares: the progress bar and the summary of a model run."""
from __future__ import annotations

import sys


def progress_bar(desc: str, unit: str = "scene"):
    from tqdm import tqdm

    bar = tqdm(total=0, desc=desc, unit=unit, file=sys.stderr, disable=None)

    def update(done: int, total: int) -> None:
        bar.total = total
        bar.n = done
        bar.refresh()
        if done == total:
            bar.close()

    return update


def report_run(res, what: str) -> int:
    """What a model runner did (every runner: ROSE's, SGP's plays and board-state answers): 1 when some failed."""
    print(f"{res.done_before} {what} already done, {res.requested} requested, {res.succeeded} done, "
          f"{len(res.failed)} failed")
    for name, err in list(res.failed.items())[:10]:
        print(f"failed: {name}: {err}", file=sys.stderr)
    if res.failed:
        print("run the same command again to retry the failed ones", file=sys.stderr)
    return 1 if res.failed else 0
