# Sourced by test.sh: a TeX engine (Debian's pdflatex with booktabs and geometry: texlive-latex-base and
# texlive-latex-recommended, ~50 MB to download, ~75 MB on disk, without the recommended extras), installed with
# apt-get when missing (root or sudo), so the paper bundle's LaTeX tables are compiled by the suite for real.
ensure_latex() {
  if ! command -v pdflatex >/dev/null || ! kpsewhich booktabs.sty >/dev/null 2>&1; then
    local SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
      texlive-latex-base texlive-latex-recommended >/dev/null
  fi
  export ROSE_REQUIRE_TEX=1   # the compile test fails, not skips, without an engine
}
