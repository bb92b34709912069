# Sourced by run.sh and test.sh: Debian's Chromium at /usr/bin/chromium, installed with apt-get when missing
# (root or sudo). The browser tests drive it through Playwright and the paper bundle renders its figures in it
# (kaleido); no tool downloads a browser of its own.
ensure_chromium() {
  if [ ! -x /usr/bin/chromium ]; then
    local SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
  fi
}
