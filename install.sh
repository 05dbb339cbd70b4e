#!/usr/bin/env bash
# vaultrag installer. Idempotent: run it as often as you like.
#
#   ./install.sh                 install into .venv, index the example vault, run a sample search
#   ./install.sh --vault PATH    record PATH as your vault (~/.config/vaultrag/config.yaml), index it,
#                                search it, and run the plugin's hook once to show what it injects
#   ./install.sh --vault PATH --claude    ... and register the hooks in ~/.claude/settings.json
#   ./install.sh --claude --project       ... in ./.claude/settings.json (of the current folder) instead
#   ./install.sh --test          install with test dependencies and run the test suite
#
# Then `.venv/bin/vaultrag doctor` checks what the hooks need. PYTHON=/path/to/python3 picks the
# interpreter (default: python3; needs 3.10+). VAULTRAG_SAMPLE_QUERY overrides the sample question.
set -euo pipefail
HERE=$(pwd)
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
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
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

VR=.venv/bin/vaultrag
STEP=(.venv/bin/python -m vaultrag.install_hooks)
if [ -n "$VAULT" ]; then
  case "$VAULT" in /*|~*) ;; *) VAULT="$HERE/$VAULT" ;; esac  # relative to where you ran install.sh
  "${STEP[@]}" config --vault "$VAULT"
fi
CONFIGURED=$(.venv/bin/python -c 'from vaultrag.config import load_config; print(load_config().vault or "")' 2>/dev/null || true)
if [ -n "$CONFIGURED" ]; then
  # Your vault, from the config file the hooks read: no --vault below, so this is what they see.
  $VR reindex
  QUERY=${VAULTRAG_SAMPLE_QUERY:-$("${STEP[@]}" sample)}
  if [ -n "$QUERY" ]; then
    echo
    echo "\$ vaultrag search \"$QUERY\" --k 3      # a sample question made from one of your notes"
    $VR search "$QUERY" --k 3 || true
  fi
else
  DEMO="$ROOT/vaultrag/example_vault"
  QUERY=${VAULTRAG_SAMPLE_QUERY:-how long are daily snapshots kept?}
  $VR reindex --vault "$DEMO"
  echo
  echo "\$ vaultrag search \"$QUERY\" --vault $DEMO"
  $VR search "$QUERY" --vault "$DEMO"
fi

SETTINGS=()
[ "$SCOPE" = project ] && SETTINGS=(--settings "$HERE/.claude/settings.json")
if [ "$CLAUDE" = 1 ]; then
  echo
  "${STEP[@]}" register --scope "$SCOPE" --python "$ROOT/.venv/bin/python" ${SETTINGS[@]+"${SETTINGS[@]}"}
fi
if [ -n "$CONFIGURED" ] && [ -n "$QUERY" ]; then
  # One real hook call: the registered command, real stdin JSON, what Claude would get.
  echo
  # Without --claude: the hooks already in ~/.claude/settings.json, else the plugin's hooks.json.
  "${STEP[@]}" check --scope "$SCOPE" ${SETTINGS[@]+"${SETTINGS[@]}"} --prompt "$QUERY" || true
elif [ -n "$CONFIGURED" ]; then
  echo
  echo "hook:    not run: the index of $CONFIGURED holds no notes to ask about (Markdown files?)"
elif [ "$CLAUDE" = 1 ]; then
  echo
  echo "hooks:   registered, but no vault is configured: they stay silent (and say so at session start)"
  echo "         until you run: $ROOT/install.sh --vault PATH --claude"
fi
echo
echo "Check the hooks any time with: $ROOT/.venv/bin/vaultrag doctor"
