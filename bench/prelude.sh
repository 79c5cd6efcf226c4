# What every bench script starts with (sourced, not run): the folders, `--no-build` taken out
# of the arguments (the rest are left in `extra`), the peers installed (bench/install.sh, once)
# into `$bench`, toolport built in release unless `--no-build`, and `$toolport` (the build to
# measure; `TOOLPORT=…` measures another).
here="$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
build=1
extra=()
for arg in "$@"; do
  case "$arg" in
    --no-build) build=0 ;;
    *) extra+=("$arg") ;;
  esac
done

bench="$(bash "$here/install.sh")"
if (( build )); then
  (cd "$root" && cargo build --release --bin toolport)
fi
toolport="${TOOLPORT:-$target/release/toolport}"
[[ -x "$toolport" ]] || { echo "$(basename "${BASH_SOURCE[1]}"): $toolport is missing (run without --no-build)" >&2; exit 1; }

# The bare rmcp relay (host/examples/bare_relay.rs), the floor the serve rows are measured
# against: built in release unless `--no-build`, and `$bare` its path.
need_bare_relay() {
  bare="$target/release/examples/bare_relay"
  if (( build )); then
    (cd "$root" && cargo build --release --example bare_relay)
  fi
  [[ -x "$bare" ]] || { echo "$(basename "${BASH_SOURCE[1]}"): $bare is missing (run without --no-build)" >&2; exit 1; }
}
