# Sourced by run-cluster.sh and test.sh: Debian's haproxy at /usr/sbin/haproxy, installed with apt-get when missing
# (root or sudo; scripts/_apt.sh says what and how big first). The cluster (tools/cluster.py) runs it in the
# foreground with a configuration it writes; the Debian service itself is not used.
source "$(dirname "${BASH_SOURCE[0]}")/_apt.sh"
ensure_haproxy() {
  if [ ! -x /usr/sbin/haproxy ]; then
    apt_install "the proxy in front of the app processes of a cluster (tools/cluster.py); ~2 MB to download" haproxy
  fi
}
