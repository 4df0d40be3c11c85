"""Writing under results/: atomic writes, so nothing half-written is ever left."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

#: The file a reproduced notebook leaves its paper's scorecard row in (see pysim.notebook.Score).
ENTRY_FILE = "scorecard_entry.json"


def write_bytes_atomic(path: Path | str, data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def write_text_atomic(path: Path | str, text: str) -> Path:
    """Text version of :func:`write_bytes_atomic` (UTF-8)."""
    return write_bytes_atomic(path, text.encode("utf-8"))
