"""A PEP 517 build backend in the standard library (zipfile, hashlib), so that
`pip install ./clients/python` needs nothing from a package index: it packs almanac_client/
(with py.typed) into a pure-Python wheel, or an sdist of this folder."""

from __future__ import annotations

import base64
import hashlib
import io
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME, VERSION = "almanac_client", "0.1.0"
DIST_INFO = f"{NAME}-{VERSION}.dist-info"
METADATA = f"""Metadata-Version: 2.1
Name: almanac-client
Version: {VERSION}
Summary: Official typed Python client for the Almanac API (standard library only)
License: MIT
Requires-Python: >=3.11
Classifier: Typing :: Typed
Description-Content-Type: text/markdown

""" + (ROOT / "README.md").read_text(encoding="utf-8")
WHEEL = "Wheel-Version: 1.0\nGenerator: almanac-client _build/backend.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def _files() -> list[Path]:
    package = ROOT / NAME
    return sorted(p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def get_requires_for_build_wheel(config_settings=None):  # noqa: ANN001, ANN201
    return []


def get_requires_for_build_sdist(config_settings=None):  # noqa: ANN001, ANN201
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):  # noqa: ANN001, ANN201
    target = Path(metadata_directory) / DIST_INFO
    target.mkdir(parents=True, exist_ok=True)
    (target / "METADATA").write_text(METADATA, encoding="utf-8")
    (target / "WHEEL").write_text(WHEEL, encoding="utf-8")
    return DIST_INFO


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):  # noqa: ANN001, ANN201
    filename = f"{NAME}-{VERSION}-py3-none-any.whl"
    records = []
    with zipfile.ZipFile(Path(wheel_directory) / filename, "w", zipfile.ZIP_DEFLATED) as whl:
        entries = [(p.relative_to(ROOT).as_posix(), p.read_bytes()) for p in _files()]
        entries += [(f"{DIST_INFO}/METADATA", METADATA.encode()), (f"{DIST_INFO}/WHEEL", WHEEL.encode())]
        for name, data in entries:
            whl.writestr(name, data)
            records.append(_record_line(name, data))
        records.append(f"{DIST_INFO}/RECORD,,")
        whl.writestr(f"{DIST_INFO}/RECORD", "\n".join(records) + "\n")
    return filename


def build_sdist(sdist_directory, config_settings=None):  # noqa: ANN001, ANN201
    base = f"almanac_client-{VERSION}"
    filename = f"{base}.tar.gz"
    with tarfile.open(Path(sdist_directory) / filename, "w:gz") as tar:
        for rel in ["pyproject.toml", "README.md", "LICENSE", "_build/backend.py", *[p.relative_to(ROOT).as_posix() for p in _files()]]:
            tar.add(ROOT / rel, arcname=f"{base}/{rel}")
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = METADATA.encode()
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return filename
