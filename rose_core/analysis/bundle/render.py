"""A paper table as Markdown, LaTeX (booktabs) and CSV. The CSV carries the frame at full precision through the
project's one CSV encoder; Markdown and LaTeX print the same numbers rounded (rates one decimal, intervals in
brackets, p-values `< 0.001` or three decimals, coefficients three decimals), the best model in bold."""
from __future__ import annotations

import math

import pandas as pd

from ...exports import frame_bytes
from .paper import Column, PaperTable

DASH = "–"   # an empty cell: never "None" or "nan"


def _missing(v: object) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))


def fmt_value(v: object, kind: str) -> str:
    """One number as printed (the one place the bundle formats numbers)."""
    if _missing(v):
        return DASH
    if kind == "text":
        return str(v)
    x = float(v)  # type: ignore[arg-type]
    if kind == "rate":
        return f"{x:.1f}"
    if kind == "count":
        return f"{int(round(x)):,}"
    if kind == "p":
        return "< 0.001" if x < 0.001 else f"{x:.3f}"
    if kind == "coef":
        return f"{x:.3f}"
    raise ValueError(f"unknown column kind {kind!r}")


def fmt_interval(lo: object, hi: object) -> str | None:
    if _missing(lo) or _missing(hi):
        return None
    return f"[{float(lo):.1f}, {float(hi):.1f}]"  # type: ignore[arg-type]


def _is_model_row(row: pd.Series) -> bool:
    kind = row.get("kind")
    return kind == "model" or (kind == "published" and not str(row.get("solver", "")).startswith("Human"))


def best_rows(t: PaperTable, col: Column) -> set[int]:
    """Rows holding the best model's value of a column (models and published model rows; ties all bold)."""
    if not col.best or "kind" not in t.frame:
        return set()
    vals = {i: float(r[col.key]) for i, r in t.frame.iterrows() if _is_model_row(r) and not _missing(r[col.key])}
    if not vals:
        return set()
    top = max(vals.values())
    return {i for i, v in vals.items() if v == top}


def cells(t: PaperTable) -> list[list[tuple[str, str | None, bool]]]:
    """Per row, per shown column: (value, interval or None, bold)."""
    bold = {c.key: best_rows(t, c) for c in t.columns}
    out = []
    for i, r in t.frame.iterrows():
        row = []
        for c in t.columns:
            v = r.get(c.key)
            iv = fmt_interval(r.get(c.lo), r.get(c.hi)) if c.lo and not _missing(v) else None
            row.append((fmt_value(v, c.kind), iv, i in bold[c.key]))
        out.append(row)
    return out


def to_markdown(t: PaperTable) -> str:
    def md(s: str) -> str:
        return s.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")

    head = "| " + " | ".join(md(c.head) for c in t.columns) + " |"
    rule = "|" + "|".join("---" if c.kind == "text" else "---:" for c in t.columns) + "|"
    lines = [f"### {t.title}", "", t.caption, "", head, rule]
    for row in cells(t):
        shown = []
        for v, iv, b in row:
            s = f"**{md(v)}**" if b else md(v)
            shown.append(f"{s} {iv}" if iv else s)
        lines.append("| " + " | ".join(shown) + " |")
    return "\n".join(lines) + "\n"


_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
          "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}",
          ">": r"\textgreater{}", "|": r"\textbar{}", "†": r"\textsuperscript{\dag}", "‡": r"\textsuperscript{\ddag}",
          "κ": r"$\kappa$", "α": r"$\alpha$", "≥": r"$\geq$", "≤": r"$\leq$", "→": r"$\rightarrow$", "–": "--",
          "—": "---", "−": r"$-$", "±": r"$\pm$", "×": r"$\times$", "’": "'", "‘": "`", "“": "``", "”": "''",
          "·": r"$\cdot$", "\n": " "}


def latex_escape(s: str) -> str:
    """Text as LaTeX source: every special character escaped, the symbols the tables use as math."""
    return "".join(_LATEX.get(ch, ch) for ch in s)


def to_latex(t: PaperTable) -> str:
    spec = "".join("l" if c.kind == "text" else "r" for c in t.columns)
    lines = [f"% {latex_escape(t.title)}: written by `python -m rose_core report --out`; needs \\usepackage{{booktabs}}",
             r"\begin{table}[t]", r"\centering", r"\small", r"\setlength{\tabcolsep}{3pt}",
             rf"\caption{{{latex_escape(t.title)}. {latex_escape(t.caption)}}}",
             rf"\label{{tab:rose-{t.name.replace('_', '-')}}}", rf"\begin{{tabular}}{{{spec}}}", r"\toprule",
             " & ".join(latex_escape(c.head) for c in t.columns) + r" \\", r"\midrule"]
    kinds = t.frame["kind"].tolist() if "kind" in t.frame else [None] * len(t.frame)
    for k, row in enumerate(cells(t)):
        if k and kinds[k] != kinds[k - 1]:
            lines.append(r"\midrule")
        shown = []
        for v, iv, b in row:
            s = latex_escape(v)
            s = rf"\textbf{{{s}}}" if b else s
            shown.append(rf"{s} {{\scriptsize {latex_escape(iv)}}}" if iv else s)
        lines.append(" & ".join(shown) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def latex_document(names: list[str]) -> str:
    """A standalone document that inputs every table (compile it to check the tables, or copy the inputs)."""
    body = "\n".join(rf"\input{{{n}.tex}}" for n in names)
    return ("\\documentclass{article}\n\\usepackage[utf8]{inputenc}\n\\usepackage[T1]{fontenc}\n"
            "\\usepackage{booktabs}\n\\usepackage[margin=1.5cm,landscape]{geometry}\n\\begin{document}\n"
            f"{body}\n\\end{{document}}\n")


def to_csv(t: PaperTable) -> bytes:
    return frame_bytes(t.frame, "csv")
