#!/usr/bin/env bash
# Installs what the VS Code extension's tests need, idempotently (a warm machine skips every step):
#   - Debian packages: chromium (the browser playwright drives), libkrb5-dev (code-server's native
#     `kerberos` module), ripgrep (seeds @vscode/ripgrep's download cache: its postinstall would
#     otherwise try api.github.com, which is not reachable here). Runs apt-get, so run as root.
#   - editors/vscode: `npm ci` (the extension's pinned toolchain).
#   - .tools/code-server: code-server 4.100.3 (VS Code 1.100.3, the newest on Node 20) and
#     playwright-core 1.65.1 from npm, pinned in a package.json written here.
# See ../shared/editor-recipes/README.md §2–3 for the why of every workaround below.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CS_VERSION=4.100.3
PW_VERSION=1.65.1
TOOLS=${SESSIONTREE_TOOLS_DIR:-$ROOT/.tools}/code-server
export DEBIAN_FRONTEND=noninteractive

log() { printf '[install-vscode-test] %s\n' "$*" >&2; }
t0=$(date +%s)

# ---------------------------------------------------------------- Debian packages
need=()
[ -x /usr/bin/chromium ] || need+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need+=(libkrb5-dev)
command -v rg >/dev/null 2>&1 || need+=(ripgrep)
command -v curl >/dev/null 2>&1 || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
  log "apt-get install ${need[*]}"
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
fi

# ---------------------------------------------------------------- the extension's toolchain
EXT=$ROOT/editors/vscode
stamp=$EXT/node_modules/.sessiontree-lock-stamp
if [ ! -f "$stamp" ] || ! cmp -s "$EXT/package-lock.json" "$stamp"; then
  log "npm ci in editors/vscode"
  (cd "$EXT" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  cp "$EXT/package-lock.json" "$stamp"
fi

# ---------------------------------------------------------------- code-server + playwright-core
want="code-server@$CS_VERSION playwright-core@$PW_VERSION node-$(node --version)"
if [ -f "$TOOLS/.installed" ] && [ "$(cat "$TOOLS/.installed")" = "$want" ] \
   && XDG_CONFIG_HOME="$TOOLS/.xdg" XDG_DATA_HOME="$TOOLS/.xdg" "$TOOLS/bin/code-server" --version >/dev/null 2>&1; then
  log "code-server $CS_VERSION already installed in $TOOLS ($(( $(date +%s) - t0 ))s)"
  exit 0
fi
log "installing code-server $CS_VERSION + playwright-core $PW_VERSION into $TOOLS"
rm -rf "$TOOLS"; mkdir -p "$TOOLS"; cd "$TOOLS"
cat > package.json <<JSON
{
  "name": "sessiontree-vscode-test-tools",
  "private": true,
  "dependencies": { "code-server": "$CS_VERSION", "playwright-core": "$PW_VERSION" }
}
JSON
export npm_config_unsafe_perm=true   # code-server's postinstall refuses to run as root without it
export npm_config_yes=true           # node-pty's postinstall runs `npx node-gyp`; ~/.npmrc may say yes=false
# Two phases so that the ripgrep cache is seeded before the postinstall scripts run.
npm install --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null
RG=$(command -v rg); work=$(mktemp -d); cp "$RG" "$work/rg"
for sw in node_modules/code-server/lib/vscode/npm-shrinkwrap.json node_modules/code-server/lib/vscode/extensions/npm-shrinkwrap.json; do
  [ -f "$sw" ] || continue
  for v in $(node -e 'const d=require(process.argv[1]);const s=new Set();for(const[k,p]of Object.entries(d.packages||{}))if(k.endsWith("node_modules/@vscode/ripgrep"))s.add(p.version);console.log([...s].join(" "))' "$PWD/$sw"); do
    pkg=$(mktemp -d); (cd "$pkg" && npm pack -q "@vscode/ripgrep@$v" >/dev/null && tar xzf ./*.tgz)
    rgver=$(sed -n "s/^const VERSION = '\(v[^']*\)'.*/\1/p" "$pkg/package/lib/postinstall.js")
    cache="${TMPDIR:-/tmp}/vscode-ripgrep-cache-$v"; mkdir -p "$cache"
    tar czf "$cache/ripgrep-$rgver-x86_64-unknown-linux-musl.tar.gz" -C "$work" rg
    rm -rf "$pkg"
  done
done
rm -rf "$work"
npm rebuild >rebuild.log 2>&1 || { tail -40 rebuild.log >&2; exit 1; }
mkdir -p bin
cat > bin/code-server <<WRAP
#!/bin/sh
exec node "$TOOLS/node_modules/code-server/out/node/entry.js" "\$@"
WRAP
chmod +x bin/code-server
XDG_CONFIG_HOME="$TOOLS/.xdg" XDG_DATA_HOME="$TOOLS/.xdg" "$TOOLS/bin/code-server" --version >&2
echo "$want" > .installed
log "done in $(( $(date +%s) - t0 ))s"
