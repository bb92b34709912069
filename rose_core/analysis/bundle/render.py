"""A paper table as Markdown, LaTeX (booktabs) and CSV. The CSV carries the frame at full precision through the
project's one CSV encoder; Markdown and LaTeX print the same numbers through the project's one number format,
`rose_core.analysis.formats` (rates one decimal, intervals in brackets, p-values `< 0.001` or three decimals,
coefficients three decimals, `–` for no value), the best model in bold."""
from __future__ import annotations

import pandas as pd

from ...common.csv_safety import frame_bytes
from ..formats import fmt, fmt_interval, is_missing
from .paper import Column, PaperTable

def _is_model_row(row: pd.Series) -> bool:
    kind = row.get("kind")
    return kind == "model" or (kind == "published" and not str(row.get("solver", "")).startswith("Human"))


def best_rows(t: PaperTable, col: Column) -> set[int]:
    """Rows holding the best model's value of a column (models and published model rows; ties all bold), compared
    as printed: two values that print the same are a tie (hidden decimals never make one look better)."""
    if not col.best or "kind" not in t.frame:
        return set()
    vals = {i: float(fmt(r[col.key], col.kind)) for i, r in t.frame.iterrows()
            if _is_model_row(r) and not is_missing(r[col.key])}
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
            lo, hi = (r.get(c.lo), r.get(c.hi)) if c.lo else (None, None)
            # an interval only beside a value, and only a whole one (`fmt_interval` refuses half of one)
            iv = None if is_missing(v) or (is_missing(lo) and is_missing(hi)) else fmt_interval(lo, hi)
            row.append((fmt(v, c.kind), iv, i in bold[c.key]))
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


LONG_ROWS = 40   # a table with more rows than this is a longtable: it breaks across pages instead of overflowing one


def _latex_rows(t: PaperTable) -> list[str]:
    r"""The body rows, with a \midrule wherever the kind of row changes (humans, models/agents, published)."""
    lines = []
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
    return lines


def to_latex(t: PaperTable) -> str:
    """A booktabs table. Up to LONG_ROWS rows: a float whose tabular is scaled down to the text width when wider
    (never cut off at the margin, never scaled up). Longer: a `longtable` that continues on the next pages with
    its header repeated (the difficulty and failure-kind tables of a large study run to hundreds of rows)."""
    spec = "".join("l" if c.kind == "text" else "r" for c in t.columns)
    head = " & ".join(latex_escape(c.head) for c in t.columns) + r" \\"
    caption = rf"\caption{{{latex_escape(t.title)}. {latex_escape(t.caption)}}}"
    label = rf"\label{{tab:rose-{t.name.replace('_', '-')}}}"
    needs = "booktabs, graphicx" + (", longtable" if len(t.frame) > LONG_ROWS else "")
    lines = [f"% {latex_escape(t.title)}: written by `python -m rose_core report --out`; needs \\usepackage{{{needs}}}"]
    if len(t.frame) > LONG_ROWS:
        lines += [r"\begingroup", r"\small", r"\setlength{\tabcolsep}{3pt}", rf"\begin{{longtable}}{{{spec}}}",
                  caption + label + r" \\", r"\toprule", head, r"\midrule", r"\endfirsthead",
                  r"\multicolumn{" + str(len(t.columns)) + r"}{l}{\scriptsize (continued)} \\", r"\toprule", head,
                  r"\midrule", r"\endhead", r"\bottomrule", r"\endfoot", *_latex_rows(t), r"\end{longtable}",
                  r"\endgroup"]
    else:
        lines += [r"\begin{table}[t]", r"\centering", r"\small", r"\setlength{\tabcolsep}{3pt}", caption, label,
                  rf"\sbox0{{\begin{{tabular}}{{{spec}}}", r"\toprule", head, r"\midrule", *_latex_rows(t),
                  r"\bottomrule", r"\end{tabular}}",
                  r"\ifdim\wd0>\linewidth\resizebox{\linewidth}{!}{\usebox0}\else\usebox0\fi", r"\end{table}"]
    return "\n".join(lines) + "\n"


def latex_document(names: list[str]) -> str:
    """A standalone document that inputs every table (compile it to check the tables, or copy the inputs)."""
    body = "\n".join(rf"\input{{{n}.tex}}" for n in names)
    return ("\\documentclass{article}\n\\usepackage[utf8]{inputenc}\n\\usepackage[T1]{fontenc}\n"
            "\\usepackage{booktabs}\n\\usepackage{graphicx}\n\\usepackage{longtable}\n"
            "\\usepackage[margin=1.5cm,landscape]{geometry}\n\\begin{document}\n"
            f"{body}\n\\end{{document}}\n")


def to_csv(t: PaperTable) -> bytes:
    return frame_bytes(t.frame, "csv")
