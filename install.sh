#!/usr/bin/env bash
# vaultrag installer. Idempotent: run it as often as you like.
#
#   ./install.sh                 install into .venv, index the example vault, run a sample search
#   ./install.sh --vault PATH    same, on your own vault
#   ./install.sh --test          install with test dependencies and run the test suite
#   ./install.sh --claude        also register the Claude Code hooks in ~/.claude/settings.json
#   ./install.sh --claude --project   ... in ./.claude/settings.json instead
#
# PYTHON=/path/to/python3 picks the interpreter (default: python3; needs 3.10+).
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(pwd)
PY=${PYTHON:-python3}
VAULT=""
MODE=main
CLAUDE=0
SCOPE=user
while [ $# -gt 0 ]; do
  case "$1" in
    --vault) VAULT="$2"; shift 2 ;;
    --vault=*) VAULT="${1#*=}"; shift ;;
    --test) MODE=test; shift ;;
    --claude) CLAUDE=1; shift ;;
    --project) SCOPE=project; shift ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
  echo "install.sh: $PY is missing or older than Python 3.10; set PYTHON=/path/to/python3" >&2
  exit 1
fi
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
EXTRAS=""
[ "$MODE" = test ] && EXTRAS="[test]"
# Reinstall only when pyproject.toml or the requested extras changed since the last install.
STAMP=.venv/.vaultrag-installed
HASH=$(.venv/bin/python -c 'import hashlib; print(hashlib.sha256(open("pyproject.toml", "rb").read()).hexdigest()[:16])')
HAVE=$(cat "$STAMP" 2>/dev/null || true)
if [ "$HAVE" != "$HASH$EXTRAS" ] && [ "$HAVE" != "$HASH[test]" ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".$EXTRAS"
  echo "$HASH$EXTRAS" > "$STAMP"
fi

if [ "$MODE" = test ]; then
  exec .venv/bin/python -m pytest "$ROOT/tests"
fi

if [ -z "$VAULT" ]; then
  VAULT="$ROOT/vaultrag/example_vault"
  QUERY="how long are daily snapshots kept?"
else
  QUERY="${VAULTRAG_SAMPLE_QUERY:-what did I decide last week?}"
fi
.venv/bin/vaultrag reindex --vault "$VAULT"
echo
echo "\$ vaultrag search \"$QUERY\" --vault $VAULT"
.venv/bin/vaultrag search "$QUERY" --vault "$VAULT"

if [ "$CLAUDE" = 1 ]; then
  .venv/bin/python -m vaultrag.install_hooks --scope "$SCOPE" --python "$ROOT/.venv/bin/python"
fi
