"""Where topo keeps files on this machine. Environment variables override every default."""

import os
from pathlib import Path


def cache_dir() -> Path:
    """topo's cache: resolved jars, the lab. `TOPO_CACHE_DIR`, else the XDG cache dir."""
    explicit = os.environ.get("TOPO_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "topo"


def jars_dir() -> Path:
    """Jars resolved with mvn, one folder per artifact set."""
    return cache_dir() / "jars"


def lab_dir() -> Path:
    """Lab clusters' config, data and logs. `TOPO_LAB_DIR` overrides."""
    explicit = os.environ.get("TOPO_LAB_DIR")
    if explicit:
        return Path(explicit).expanduser()
    return cache_dir() / "lab"


def state_dir() -> Path:
    """Running replication jobs: pid, logs, status, Spark checkpoints. `TOPO_STATE_DIR`
    overrides; else the XDG state dir (`~/.local/state/topo`)."""
    explicit = os.environ.get("TOPO_STATE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "state"
    return base / "topo"


def write_private(path: Path, text: str) -> None:
    """Write a file only its owner can read (it may hold a password or a setting that is)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    os.chmod(path, 0o600)
