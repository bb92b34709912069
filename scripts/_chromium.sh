# Sourced by test.sh: Debian's Chromium at /usr/bin/chromium, installed with apt-get when missing (root or sudo;
# scripts/_apt.sh says what and how big first). The browser tests drive it through Playwright (the app itself needs
# no browser: the paper bundle's figures are drawn by Matplotlib); no tool downloads a browser of its own.
# Without the recommended extras (avahi, cups, samba helpers, udev, perl: 284 packages, ~250 MB download, ~900 MB
# on disk) it is 154 packages, ~200 MB download, ~700 MB on disk on a bare Debian 12, and runs headless as well.
source "$(dirname "${BASH_SOURCE[0]}")/_apt.sh"
ensure_chromium() {
  if [ ! -x /usr/bin/chromium ]; then
    apt_install "the browser the browser tests drive (Playwright); ~200 MB to download" chromium
  fi
}
