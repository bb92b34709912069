"""Task instances derived from a scene: T1-T5 and the two bridge controls.

Prompts describe the grid, the coordinates and the output protocol but never
name the target: a solver must infer "the odd ones" from the majority of the
whole grid, as in ROSE. Humans get a short instruction for the same question.
"""
from __future__ import annotations

from .records import TEMPLATE_OUTPUT, Cell, Gold, Instance, Region, Scene, Template

PREAMBLE = (
    "The image shows a grid. Rows are numbered R1, R2, ... from top to bottom and columns C1, C2, ... "
    "from left to right; a cell is written (Rr,Cc). Almost every cell of the whole grid shows the same "
    "item; a few cells show a different, visually similar item. Call those few cells the odd cells. "
    "Which item is the odd one is never given: decide it from the majority of the whole grid."
)

FORMAT = {
    "count": "Answer with exactly one final line of the form COUNT(n), where n is a whole number.",
    "click": (
        "Answer by clicking each such cell once, then finish: CLICK(Rr,Cc); CLICK(Rr,Cc); ...; DONE "
        "(for example CLICK(R2,C3); CLICK(R4,C1); DONE). If there is no such cell, answer DONE alone."
    ),
    "click_submit": (
        "Answer by clicking each such cell once, then submit how many you clicked: "
        "CLICK(Rr,Cc); ...; SUBMIT(n) (for example CLICK(R2,C3); CLICK(R4,C1); SUBMIT(2)). "
        "If there is no such cell, answer SUBMIT(0) alone."
    ),
}


def protocol_string(output: str, count: int | None, cells: list[Cell] | None) -> str:
    """The canonical protocol string: what a perfect model or a participant's UI produces."""
    clicks = "".join(f"CLICK(R{r},C{c}); " for r, c in (cells or []))
    if output == "count":
        return f"COUNT({count})"
    if output == "click":
        return clicks + "DONE"
    return clicks + f"SUBMIT({count})"


def _instance(scene: Scene, template: Template, image: str, context: Region, mode: str,
              ask: str, human: str) -> Instance:
    inside = [t for t in scene.targets if (t in context) == (mode == "inside")]
    output = TEMPLATE_OUTPUT[template]
    gold = Gold(count=len(inside) if output != "click" else None,
                cells=None if output == "count" else sorted(inside))
    return Instance(
        instance_id=f"{scene.scene_id}-{template}", scene_id=scene.scene_id, subset=scene.subset,
        split=scene.split, template=template, image=image, context=context, context_mode=mode,  # type: ignore[arg-type]
        prompt=f"{PREAMBLE}\n\nTask: {ask}\n{FORMAT[output]}", instruction=human, gold=gold,
        protocol_answer=protocol_string(output, gold.count, gold.cells),
    )


def derive_instances(scene: Scene) -> list[Instance]:
    """The seven instances of a scene, in `records.TEMPLATES` order."""
    base, hl = scene.images["base"], scene.images["highlight"]
    grid = Region.whole(scene.rows, scene.cols)
    r2, r3, r4, r5 = (scene.regions[t] for t in ("T2", "T3", "T4", "T5"))
    out = [
        _instance(scene, "T1", base, grid, "inside",
                  "How many odd cells are there in the whole grid?",
                  "Count the cells that differ from the rest of the grid, enter the number and submit."),
        _instance(scene, "T2", base, r2, "inside",
                  f"How many odd cells are there in {r2.describe()}?",
                  f"Count the odd cells in {r2.describe()} only, enter the number and submit."),
        _instance(scene, "T3", base, r3, "inside",
                  f"Click every odd cell in {r3.describe()}, and no other cell.",
                  f"Click every odd cell in {r3.describe()} (and nothing else), then press DONE."),
        _instance(scene, "T4", hl, r4, "inside",
                  "One rectangular region of the grid is highlighted (tinted and outlined). "
                  "Click every odd cell inside the highlighted region, and no other cell.",
                  "Click every odd cell inside the highlighted region (and nothing else), then press DONE."),
        _instance(scene, "T5", base, r5, "outside",
                  f"Ignore {r5.describe()}: it is excluded. Click every odd cell outside the excluded "
                  "rectangle, then submit the number of odd cells outside it.",
                  f"Ignore {r5.describe()}. Click every odd cell outside it, enter how many there are, "
                  "then press SUBMIT."),
        _instance(scene, "G-Clk", base, grid, "inside",
                  "Click every odd cell in the whole grid.",
                  "Click every cell that differs from the rest of the grid, then press DONE."),
        _instance(scene, "mL-Cnt", base, r3, "inside",
                  f"How many odd cells are there in {r3.describe()}?",
                  f"Count the odd cells in {r3.describe()} only, enter the number and submit."),
    ]
    return out
