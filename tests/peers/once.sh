# Sourced by the peer installers: each installs into one folder under target/, once, safe from
# several tests at once (an exclusive `flock` on the folder's .lock), with a stamp file written
# last marking a complete install, so an interrupted one is redone rather than trusted.
#
#   once_begin DIR STAMP    makes DIR, takes its lock; if STAMP is there, prints DIR and exits 0.
#                           Sets once_dir to DIR's absolute path.
#   once_done               writes the stamp and prints once_dir.

once_begin() {
  mkdir -p "$1"
  once_dir="$(cd "$1" && pwd)"
  once_stamp="$once_dir/.installed-$2"
  exec 9>"$once_dir/.lock"
  flock 9
  if [[ -f "$once_stamp" ]]; then
    echo "$once_dir"
    exit 0
  fi
}

once_done() {
  touch "$once_stamp"
  echo "$once_dir"
}
