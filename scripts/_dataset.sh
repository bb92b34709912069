# Sourced by run.sh and run-cluster.sh: the app's dataset (ROSE_DATASET_DIR, else data/datasets/rose-v0.1) built
# before any server starts, with a progress bar in this terminal (`python -m rose_core build`; ~26 s of CPU,
# about 15 s on two cores, first start only), so no visitor waits on it behind a page. Already built: nothing to do. A folder there
# that is not a finished dataset is refused with the reason, and nothing starts.
ensure_dataset_built() {
  local root
  root="$(python -c 'from rose_core import dataset_dir; print(dataset_dir())')"
  if [ ! -f "$root/manifest.json" ]; then
    echo "$(basename "$0"): building the dataset into $root (first start only)"
    python -m rose_core build --out "$root"
  fi
}
