"""The help texts of the options many commands share: where the database and the datasets are, and their
defaults as the code computes them (`storage.connection.db_location`, `benchmarks.rose.dataset.dataset_dir`,
`benchmarks.sgp.dataset.sgp_dataset_dir`)."""
from __future__ import annotations

DB_HELP = "the database: a SQLite file path or a postgresql:// URL (default: $ROSE_DB or data/rose.db)"
DATASET_HELP = "the ROSE dataset folder (default: $ROSE_DATASET_DIR or data/datasets/rose-v0.1)"
EPISODES_HELP = "the SGP dataset folder (default: $ROSE_SGP_DATASET_DIR or data/datasets/sgp)"
