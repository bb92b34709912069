# Sourced by run-cluster.sh and test.sh: Debian's haproxy at /usr/sbin/haproxy, installed with apt-get when missing
# (root or sudo). The cluster (tools/cluster.py) runs it in the foreground with a configuration it writes; the
# Debian service itself is not used.
ensure_haproxy() {
  if [ ! -x /usr/sbin/haproxy ]; then
    local SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq haproxy >/dev/null
  fi
}
