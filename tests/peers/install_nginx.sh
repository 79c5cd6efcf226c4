#!/usr/bin/env bash
# Installs Debian's nginx without root into <target>/nginx, once, for the replicas test
# (tests/it/team/replicas.rs) and bench/replicas.sh: the load balancer in front of three
# `toolport serve --http` processes, as a team would run it.
#
#   tests/peers/install_nginx.sh [TARGET_DIR]     prints the nginx folder on success;
#                                                 the binary is <folder>/usr/sbin/nginx
#
# `apt-get download` fetches the packages as any user may (no dpkg database touched) and
# `dpkg -x` unpacks them: nginx itself and nginx-common (its mime.types and the default
# layout). Its libraries (libc, libcrypt, libpcre2, libssl3, zlib) are in every Debian and
# Ubuntu base image; a missing one is reported by name. The test writes its own config and
# runs the binary with `-p` and `-c` under a temp folder, so nothing under /etc or /var is used.
#
# Same shape as tests/peers/install_observers.sh: idempotent and locked (tests/peers/once.sh).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
target="${1:-${CARGO_TARGET_DIR:-$here/../../target}}"
source "$here/once.sh"
once_begin "$target/nginx" "1"
nginx_dir="$once_dir"

command -v apt-get >/dev/null && command -v dpkg >/dev/null \
  || { echo "install_nginx.sh: needs apt-get and dpkg (a Debian or Ubuntu machine)" >&2; exit 1; }

# A half-unpacked tree from an interrupted run is replaced, not trusted.
rm -rf "$nginx_dir/debs" "$nginx_dir/usr" "$nginx_dir/etc" "$nginx_dir/var" "$nginx_dir/lib"
mkdir -p "$nginx_dir/debs"
(cd "$nginx_dir/debs" && apt-get download nginx nginx-common >&2) || {
  echo "install_nginx.sh: apt-get download nginx nginx-common failed (run apt-get update?)" >&2
  exit 1
}
for deb in "$nginx_dir"/debs/*.deb; do
  dpkg -x "$deb" "$nginx_dir"
done

missing="$(ldd "$nginx_dir/usr/sbin/nginx" | awk '/not found/ {print $1}')"
if [[ -n "$missing" ]]; then
  echo "install_nginx.sh: nginx needs libraries this machine lacks: $missing" >&2
  exit 1
fi
"$nginx_dir/usr/sbin/nginx" -v >&2 || { echo "install_nginx.sh: nginx does not run" >&2; exit 1; }

once_done
