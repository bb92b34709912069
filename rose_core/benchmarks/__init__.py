"""The benchmarks the instrument serves, each a self-contained package (no import of the instrument).

A benchmark provides its items (scenes and renderings, instances, the model-facing prompt), its protocol and
its scorer; the instrument (`rose_core.instrument`, `rose_core.storage`, `rose_core.analysis`) runs studies,
stores responses and analyses them through the item interfaces in `rose_core.instrument.items`.
"""
