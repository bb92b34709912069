"""The paper bundle: `python -m rose_core report --out DIR` (and the Results page's download button) writes every
paper table (Markdown, LaTeX, CSV), the figures (SVG, PDF, PNG), the human-baseline reporting checklist, a
methods paragraph and a manifest, all from one selection of the database."""
from .paper import BundleError, Column, PaperReport, PaperTable, check_dataset, json_records, paper_report
from .write import bundle_zip, code_version, write_bundle

__all__ = ["BundleError", "Column", "PaperReport", "PaperTable", "check_dataset", "json_records", "paper_report",
           "bundle_zip", "code_version", "write_bundle"]
