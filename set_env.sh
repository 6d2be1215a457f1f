# Environment for a pyatc prefix install (the CANN-style tree written by
# scripts/install_prefix.sh):  source <prefix>/set_env.sh
#
# Puts <prefix>/bin on PATH (atc, pyatc), <prefix>/lib64 on LD_LIBRARY_PATH
# (libpyatc_wrapper.so) and <prefix>/python/site-packages on PYTHONPATH (the ge package), so
# `pyatc`, `python3 -m ge.pyatc` and `import ge` work from whichever Python 3 you run. Python
# dependencies (numpy, onnx, protobuf, cffi) come from that interpreter's own environment.
# Sourcing twice does not duplicate entries.

if [ -n "${BASH_SOURCE:-}" ]; then
    _pyatc_here="${BASH_SOURCE[0]}"
elif [ -n "${ZSH_VERSION:-}" ]; then
    eval '_pyatc_here="${(%):-%x}"'
else
    _pyatc_here="@PYATC_INSTALL_PREFIX@/set_env.sh"
fi
_pyatc_root="$(cd "$(dirname "${_pyatc_here}")" && pwd -P)"

_pyatc_prepend() {
    # $1: variable name, $2: directory
    eval "_pyatc_value=\"\${$1:-}\""
    case ":${_pyatc_value}:" in
        *":$2:"*) ;;
        *) eval "export $1=\"$2\${_pyatc_value:+:\${_pyatc_value}}\"" ;;
    esac
}

_pyatc_prepend PATH "${_pyatc_root}/bin"
_pyatc_prepend LD_LIBRARY_PATH "${_pyatc_root}/lib64"
_pyatc_prepend PYTHONPATH "${_pyatc_root}/python/site-packages"

unset -f _pyatc_prepend
unset _pyatc_here _pyatc_root _pyatc_value
