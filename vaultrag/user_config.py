"""Record the vault in the user's config file (`install.sh --vault PATH`), never clobbering it.

The file is the one `load_config` reads by default (`$VAULTRAG_CONFIG`, else
`$XDG_CONFIG_HOME/vaultrag/config.yaml`, else `~/.config/vaultrag/config.yaml`). A new file gets a
short commented header and the `vault:` key. An existing file keeps every other key, comment and
its layout: only the top-level `vault:` line is replaced (or one is appended), after a timestamped
backup, and the result is parsed and validated before it replaces the original.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from .config import config_file_path, from_mapping
from .errors import ConfigError

HEADER = (
    "# vaultrag configuration, written by install.sh. Every key is documented in\n"
    "# vaultrag/config.example.yaml; unknown keys are errors. Edit freely: install.sh only\n"
    "# ever replaces the `vault:` line (after a backup).\n"
)
# A top-level `vault:` key with a value on the same line (indented keys belong to sections).
_VAULT_LINE = re.compile(r"^vault[ \t]*:.*$", re.MULTILINE)


@dataclass(frozen=True)
class ConfigWrite:
    path: Path
    action: str  # "created" | "updated" | "unchanged"
    backup: Path | None = None
    previous_vault: str | None = None


def _yaml_string(value: str) -> str:
    # A JSON string is a valid YAML double-quoted scalar (JSON's escapes are a subset of YAML's).
    return json.dumps(value, ensure_ascii=False)


def _parse(text: str, origin: str) -> dict:
    import yaml  # install time only, never on a hook path

    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{origin}: not valid YAML ({str(exc).splitlines()[0]}); fix it by hand, "
                          "nothing was changed") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{origin}: the top level is not a mapping of keys; fix it by hand, nothing was changed")
    return data


def _with_vault(text: str, vault: str) -> str:
    line = f"vault: {_yaml_string(vault)}"
    if _VAULT_LINE.search(text):
        return _VAULT_LINE.sub(lambda _m: line, text, count=1)
    return text + ("" if not text or text.endswith("\n") else "\n") + line + "\n"


def record_vault(vault: str | os.PathLike, config_file: str | os.PathLike | None = None) -> ConfigWrite:
    """Make the user config name `vault` (an existing folder; stored as an absolute path)."""
    folder = Path(vault).expanduser().resolve()
    if not folder.is_dir():
        raise ConfigError(f"vault folder {folder} does not exist; pass the folder that holds your notes")
    path, _explicit = config_file_path(config_file)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        _write(path, HEADER + f"vault: {_yaml_string(str(folder))}\n")
        return ConfigWrite(path, "created")
    text = path.read_text(encoding="utf-8")
    data = _parse(text, str(path))
    from_mapping(data, origin=str(path))  # an invalid config is the user's to fix: say so, change nothing
    old = data.get("vault")
    if old is not None and Path(os.path.expandvars(str(old))).expanduser().resolve() == folder:
        return ConfigWrite(path, "unchanged", previous_vault=str(old))
    new_text = _with_vault(text, str(folder))
    new_data = _parse(new_text, str(path))
    expected = {**data, "vault": str(folder)}
    if new_data != expected:  # e.g. a multi-line `vault:` value the line edit cannot handle
        raise ConfigError(f"{path}: could not update `vault:` safely; set `vault: {folder}` by hand")
    backup = path.with_name(path.name + time.strftime(".bak-%Y%m%d-%H%M%S"))
    shutil.copy2(path, backup)
    _write(path, new_text)
    return ConfigWrite(path, "updated", backup=backup, previous_vault=None if old is None else str(old))


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
