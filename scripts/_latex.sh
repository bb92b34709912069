# Sourced by test.sh: a TeX engine (Debian's pdflatex with booktabs and geometry: texlive-latex-base and
# texlive-latex-recommended, 53 packages, ~77 MB to download, ~260 MB on disk on a bare Debian 12, without the
# recommended extras), installed with apt-get when missing (root or sudo; scripts/_apt.sh says what and how big
# first), so the paper bundle's LaTeX tables are compiled by the suite for real.
source "$(dirname "${BASH_SOURCE[0]}")/_apt.sh"
ensure_latex() {
  if ! command -v pdflatex >/dev/null || ! kpsewhich booktabs.sty >/dev/null 2>&1; then
    apt_install "pdflatex, to compile the paper bundle's LaTeX tables in the tests; ~77 MB to download" \
      texlive-latex-base texlive-latex-recommended
  fi
  export ROSE_REQUIRE_TEX=1   # the compile test fails, not skips, without an engine
}
