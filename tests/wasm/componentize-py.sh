# Sourced by tests/wasm/build-python.sh and plugins/examples/build.sh: one pinned componentize-py,
# installed once into <target>/wasm-peers/python and shared by every Python component the repo
# builds.
#
#   componentize_py_lock PEERS          takes the exclusive lock on PEERS/.lock-python (fd 9)
#   componentize_py_install PEERS       installs it unless PEERS/python has the stamp; prints the stamp
#   componentize_py PEERS ARGS…         runs it, without the machine's site-packages
#
# Callers hold the lock for as long as they use the tool (an install replaces the folder).

COMPONENTIZE_PY_VERSION="${COMPONENTIZE_PY_VERSION:-0.25.1}"

componentize_py_lock() {
  exec 9>"$1/.lock-python"
  flock 9
}

componentize_py_install() {
  local peers="$1" tool="$1/python"
  local stamp="$tool/.installed-$COMPONENTIZE_PY_VERSION"
  command -v python3 >/dev/null 2>&1 || {
    echo "componentize-py.sh: python3 is not on PATH (componentize-py is a PyPI package)" >&2
    return 1
  }
  if [[ ! -f "$stamp" ]]; then
    rm -rf "$tool"
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --target "$tool" \
      "componentize-py==$COMPONENTIZE_PY_VERSION" >&2 || {
      echo "componentize-py.sh: pip could not install componentize-py==$COMPONENTIZE_PY_VERSION into $tool" >&2
      return 1
    }
    [[ -x "$tool/bin/componentize-py" ]] || {
      echo "componentize-py.sh: $tool/bin/componentize-py is missing after pip install" >&2
      return 1
    }
    touch "$stamp"
  fi
  echo "$stamp"
}

# Without a VIRTUAL_ENV, componentize-py adds the machine's own site-packages (`python3 -c
# 'import site…'`) to the app's path, and their listing ends up in the component: an empty one
# keeps the build the same on every machine. pip --target's entry script does not put its own
# folder on sys.path, hence PYTHONPATH.
componentize_py() {
  local peers="$1"
  shift
  mkdir -p "$peers/python-no-site/lib/site-packages"
  VIRTUAL_ENV="$peers/python-no-site" PYTHONPATH="$peers/python" "$peers/python/bin/componentize-py" "$@"
}
