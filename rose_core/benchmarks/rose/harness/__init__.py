"""Harness files shipped with `export`: copied verbatim next to the exported data (see harness_export)."""
