"""ROSE as an inspect_ai task (written by `python -m rose_core export --format inspect-task`).

    inspect eval rose_inspect.py --model openai/gpt-4o --log-dir logs

Every sample's id is the ROSE instance id and its metadata carries the dataset hash, so the log maps
back to instances with certainty; import it with `python -m rose_core import-run logs/<file>.eval`.
No scorer: ROSE scores on import, with the same scorer as its human participants.
"""
import json
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageUser, ContentImage, ContentText
from inspect_ai.solver import generate

HERE = Path(__file__).resolve().parent
METADATA = ("instance_id", "dataset_hash", "index", "scene_id", "subset", "split", "template")


def record_to_sample(r: dict) -> Sample:
    return Sample(id=r["instance_id"],
                  input=[ChatMessageUser(content=[ContentImage(image=str(HERE / r["image"])),
                                                  ContentText(text=r["prompt"])])],
                  target=r["answer"], metadata={k: r[k] for k in METADATA})


@task
def rose() -> Task:
    rows = [json.loads(line) for line in (HERE / "rose.jsonl").read_text().splitlines() if line.strip()]
    return Task(dataset=MemoryDataset([record_to_sample(r) for r in rows], name="rose"), solver=generate())
