"""The instrument half of ROSE Studio: studies, participant sessions, items and what they record.

The benchmark half (today ROSE: assets, scenes, rendering, instances, protocol, scoring) knows nothing of
participants; the instrument knows a benchmark only through the item contracts in `benchmarks/items.py`, so a second
benchmark with multi-step episodes (iVISPAR) plugs in beside ROSE's one-shot items.
"""
