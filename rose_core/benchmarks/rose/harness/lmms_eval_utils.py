"""ROSE task functions for lmms-eval (written by `python -m rose_core export --format lmms-eval-task`).

The target lmms-eval logs for each sample is a JSON object naming the instance id and the dataset hash
beside the gold answer: lmms-eval >= 0.5 logs neither the doc nor the responses' context, and its
`doc_id` is a position in this folder's dataset, so this is how ROSE Studio maps every sample back to
its instance with certainty on import. Scoring happens on import, with ROSE's own scorer.
"""
import json


def doc_to_visual(doc):
    return [doc["image"].convert("RGB")]


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    return doc["prompt"]


def doc_to_target(doc):
    return json.dumps({"instance_id": doc["instance_id"], "dataset_hash": doc["dataset_hash"],
                       "answer": doc["answer"]})


def process_results(doc, results):
    """A rough progress figure only (last line equals the gold string); the ROSE numbers come from import."""
    text = (results[0] if results else "") or ""
    lines = [x.strip() for x in text.strip().splitlines() if x.strip()]
    return {"rose_exact": float(bool(lines) and lines[-1] == doc["answer"])}
