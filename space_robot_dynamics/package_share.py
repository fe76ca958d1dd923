"""Where the package's data (urdf/, config/, launch/, rviz/) lives: source tree, pip prefix or colcon install."""
from __future__ import annotations

import sys
from pathlib import Path

from .errors import ConfigError

PACKAGE_NAME = "space_robot"


def share_directory() -> Path:
    """The folder holding urdf/ and config/.

    Order: the source checkout this module sits in (development and tests), then the ament index
    (colcon or ROS install), then `<sys.prefix>/share/space_robot` (pip install).
    """
    source_root = Path(__file__).resolve().parents[1]
    if (source_root / "package.xml").is_file() and (source_root / "urdf").is_dir():
        return source_root
    try:  # ROS 2 / colcon install
        from ament_index_python.packages import get_package_share_directory

        return Path(get_package_share_directory(PACKAGE_NAME))
    except Exception:  # noqa: BLE001 - ament_index absent or package not indexed: fall through
        pass
    for prefix in (Path(sys.prefix), source_root.parents[2] if len(source_root.parents) > 2 else source_root):
        candidate = prefix / "share" / PACKAGE_NAME
        if (candidate / "urdf").is_dir():
            return candidate
    raise FileNotFoundError(f"cannot find the share directory of {PACKAGE_NAME} (looked in {source_root}, "
                            f"the ament index and {sys.prefix}/share)")


def resolve(path: str | Path) -> Path:
    """An absolute path as given, or a path relative to the share directory (e.g. 'urdf/servicer.urdf.xacro')."""
    path = Path(path)
    if path.is_absolute():
        return path
    return share_directory() / path


def find_in_share(text: str | Path, folder: str, kind: str = "file") -> Path:
    """A configuration file given as a path (absolute, or relative to the working directory), a path relative
    to the share directory, or the name of a file in the share's `folder`, with or without ".yaml"
    ("servicer_pregrasp" -> <share>/config/scenarios/servicer_pregrasp.yaml). ConfigError naming `kind` if none
    is a file."""
    path = Path(text)
    if path.is_file():
        return path.resolve()
    for candidate in (resolve(path), resolve(Path(folder) / path), resolve(Path(folder) / f"{text}.yaml")):
        if candidate.is_file():
            return candidate
    shipped = sorted(p.stem for p in resolve(folder).glob("*.yaml"))
    raise ConfigError(kind, f"{str(text)!r}: no such file (looked in the working directory {Path.cwd()} and in "
                      f"{resolve(folder)}, which has: {', '.join(shipped) or 'nothing'})")
