"""The sandboxed child's private home, temporary and cache folders, inside its scratch folder.

Ordinary Python code expects a writable home and temporary folder: matplotlib
refuses to import without a writable config or cache folder, ``tempfile``
needs a temporary one, torch.hub, triton and pip-style tools cache under
``~/.cache``. The child may write only to its scratch folder (landlock; with
``mountns_scratch`` a size-capped tmpfs), so every such location is pointed
inside it, before any student code runs. Nothing outside the scratch becomes
writable: this only tells well-behaved libraries where the writable place is.

The scratch goes away with the child: the tmpfs lives in the child's own mount
namespace, and the judge removes the folder underneath it after grading
(``api.Grader`` and ``batch`` make it with ``tempfile``).
"""

from __future__ import annotations

import importlib
import io
import os
import tempfile
from types import MappingProxyType
from typing import Mapping

# Environment variable -> folder inside the scratch (created 0700 before student code runs).
FOLDERS: Mapping[str, str] = MappingProxyType({
    "HOME": "home",
    "TMPDIR": "tmp",
    "XDG_CACHE_HOME": "home/.cache",
    "XDG_CONFIG_HOME": "home/.config",
    "XDG_DATA_HOME": "home/.local/share",
    "XDG_STATE_HOME": "home/.local/state",
    "XDG_RUNTIME_DIR": "run",
    "MPLCONFIGDIR": "home/.config/matplotlib",  # matplotlib's config and font cache (it raises at import without one)
    "TORCH_HOME": "home/.cache/torch",  # torch.hub; set in full: a server-wide TORCH_HOME would point elsewhere
})
# Variables that name the same folder as another (tempfile reads TMPDIR, then TEMP, then TMP).
ALIASES: Mapping[str, str] = MappingProxyType({"TEMP": "TMPDIR", "TMP": "TMPDIR"})
# Fixed values: no display exists in the sandbox, so plots go to files (plt.show() only warns).
FIXED: Mapping[str, str] = MappingProxyType({"MPLBACKEND": "Agg"})


def environment(scratch: str) -> dict[str, str]:
    """The variables a child with scratch folder ``scratch`` gets (absolute paths inside it)."""
    root = os.path.realpath(scratch)
    env = {name: os.path.join(root, rel) for name, rel in FOLDERS.items()}
    env.update({alias: env[target] for alias, target in ALIASES.items()})
    env.update(FIXED)
    return env


def enter(scratch: str | None) -> dict[str, str]:
    """Create the private folders and point the environment and ``tempfile`` at them; returns what was set.

    Call in the child after the layers are on (the tmpfs is mounted by then, so the
    folders land on it, not on the disk folder underneath). ``tempfile`` caches its
    folder on first use, and the warm server may have used it before forking, so its
    cache is replaced too. Without a scratch folder only the fixed values are set:
    there is nowhere to write.
    """
    if scratch is None:
        os.environ.update(FIXED)
        return dict(FIXED)
    env = environment(scratch)
    for name in FOLDERS:
        os.makedirs(env[name], mode=0o700, exist_ok=True)
    os.environ.update(env)  # os.environ calls putenv: C libraries reading getenv see them too
    tempfile.tempdir = env["TMPDIR"]
    return env


def preload_plotting() -> bool:
    """In the warm server, before any fork: import pyplot on Agg and draw one picture, so children share it.

    A submission that imports ``matplotlib.pyplot`` then loads in ~30 ms instead
    of ~0.45 s (measured: the import and a font scan into ``MPLCONFIGDIR``); the
    server gets ready ~0.15 s later, while the judge does its own imports. The
    preloaded matplotlib keeps the server's config folder (read at import, not
    written after), so the child's ``MPLCONFIGDIR`` serves only when this could
    not run. The picture has no text, so no font file is left open across the
    fork (children close inherited descriptors). Returns False when matplotlib
    cannot be imported here: children then import it themselves and a student
    sees the real error.
    """
    try:
        matplotlib = importlib.import_module("matplotlib")
        matplotlib.use("Agg")
        plt = importlib.import_module("matplotlib.pyplot")
    except (ImportError, OSError):
        return False
    figure = plt.figure(figsize=(1, 1))
    axes = figure.add_axes((0.0, 0.0, 1.0, 1.0))
    axes.imshow([[0.0, 1.0], [1.0, 0.0]])
    axes.set_axis_off()
    figure.savefig(io.BytesIO(), format="png")  # imports the Agg canvas and PIL's PNG writer
    plt.close(figure)
    return True
