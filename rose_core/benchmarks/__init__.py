"""The benchmarks the instrument serves, each a self-contained package importing only other benchmarks, the
storage layer and `rose_core.common` (tests/test_layers.py checks it).

A benchmark provides its items (scenes and renderings, instances, the model-facing prompt), its protocol and
its scorer; the instrument (`rose_core.instrument`, above it) runs studies, and the storage layer (below it)
stores responses, through the item contracts in `rose_core.benchmarks.items` (`OneShotItem`, `EpisodeItem`).
"""
