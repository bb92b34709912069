"""ROSE Studio core: regenerate the ROSE benchmark, parse its protocol, score any response.

The public face; everything else in the package is an implementation module.
"""
from .benchmarks.rose.assets import AssetError, AssetPack, load_assets
from .benchmarks.rose.composition import DEFAULT_SEED, plan
from .benchmarks.rose.dataset import DEFAULT_DATASET_DIR, Dataset, DatasetError, build_dataset, dataset_dir
from .benchmarks.rose.instances import derive_instances, protocol_string
from .benchmarks.rose.metrics import ScoredRow, Summary, format_summary, summarize
from .benchmarks.rose.protocol import Parsed, parse
from .benchmarks.rose.records import (
    GROUPS, MAIN_TEMPLATES, SUBSET_GROUP, SUBSETS, TEMPLATE_LABEL, TEMPLATE_OUTPUT, TEMPLATES,
    Gold, Instance, Layout, Region, Scene,
)
from .benchmarks.rose.render import layout_for, render_scene
from .runs.response_file import ResponseFileError, read_responses
from .benchmarks.rose.scenes import generate_scene
from .benchmarks.rose.scoring import FAILURES, SCORER_VERSION, Score, ScoreKey, score, score_parsed

__all__ = [
    "AssetError", "AssetPack", "load_assets", "DEFAULT_SEED", "plan", "DEFAULT_DATASET_DIR", "Dataset",
    "DatasetError", "build_dataset", "dataset_dir", "derive_instances", "protocol_string", "ScoredRow",
    "Summary", "format_summary", "summarize", "Parsed", "parse", "GROUPS", "MAIN_TEMPLATES", "SUBSET_GROUP",
    "SUBSETS", "TEMPLATE_LABEL", "TEMPLATE_OUTPUT", "TEMPLATES", "Gold", "Instance", "Layout", "Region", "Scene",
    "layout_for", "render_scene", "ResponseFileError", "read_responses", "generate_scene", "FAILURES", "Score",
    "ScoreKey", "score", "score_parsed", "SCORER_VERSION",
]
