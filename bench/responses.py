"""A realistic mix of responses for the scoring benchmark: what models and participants send."""
from __future__ import annotations

import random

from rose_core import Dataset

PROSE = [
    "", "Let me look at the grid carefully. ", "The majority item appears in most cells; the odd ones differ slightly.\n",
    "**Answer:** ", "After scanning each row:\n\n", "I count the differing cells row by row. Final answer: ",
]


def make_responses(ds: Dataset, n: int, seed: int = 0) -> list[tuple[str, str]]:
    """(instance_id, response) pairs: right, wrong, prose-wrapped and invalid answers."""
    rng = random.Random(seed)
    insts = sorted(ds.instances.values(), key=lambda i: i.instance_id)
    out = []
    for k in range(n):
        inst = insts[k % len(insts)]
        scene = ds.scenes[inst.scene_id]
        roll = rng.random()
        if roll < 0.5:
            body = inst.protocol_answer
        elif roll < 0.8:
            cells = [(rng.randint(1, scene.rows), rng.randint(1, scene.cols)) for _ in range(rng.randint(0, 5))]
            clicks = "".join(f"CLICK(R{r},C{c}); " for r, c in cells)
            body = {"T1": f"COUNT({rng.randint(0, 9)})", "T2": f"COUNT({rng.randint(0, 9)})",
                    "mL-Cnt": f"COUNT({rng.randint(0, 9)})", "T5": clicks + f"SUBMIT({len(cells)})"}.get(
                        inst.template, clicks + "DONE")
        elif roll < 0.95:
            body = "I think there are " + str(rng.randint(1, 9)) + " odd cells, but I cannot click."
        else:
            body = "CLICK(R1,C1); CLICK(R2,C2)"
        out.append((inst.instance_id, rng.choice(PROSE) + body))
    return out
