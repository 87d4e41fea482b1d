"""_sweep_build: the build backend of the `sweep` package (PEP 517), in the
standard library alone.

pyproject.toml names it with `backend-path = ["."]` and requires nothing,
so `pip install examples/clients/python` builds and installs offline, into
any interpreter of 3.8 or later, with no setuptools or wheel in the build
environment. It builds what the package is: one module, sweep.py, in a
pure-Python wheel (and `pip install -e` a wheel holding a .pth file that
puts this folder on sys.path). It is not installed itself.
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

NAME = "sweep-client"
MODULE = "sweep.py"
HERE = os.path.dirname(os.path.abspath(__file__))
SUMMARY = "Report a trial's metrics to sweep, the experiment-sweep orchestrator"
_EPOCH = (1980, 1, 1, 0, 0, 0)  # the same bytes every build


def _read(name):
    with open(os.path.join(HERE, name), "rb") as f:
        return f.read()


def _version():
    m = re.search(rb'^__version__ = "([^"]+)"', _read(MODULE), re.M)
    if not m:
        raise RuntimeError("%s has no __version__" % MODULE)
    return m.group(1).decode("ascii")


def _dist():
    return "%s-%s" % (NAME.replace("-", "_"), _version())


def _metadata():
    readme = _read("README.md").decode("utf-8")
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\n"
            "Requires-Python: >=3.8\n"
            "Description-Content-Type: text/markdown\n\n%s"
            % (NAME, _version(), SUMMARY, readme)).encode("utf-8")


def _wheel_file():
    return (b"Wheel-Version: 1.0\nGenerator: _sweep_build\n"
            b"Root-Is-Purelib: true\nTag: py3-none-any\n")


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
    return "%s,sha256=%s,%d\n" % (arcname, digest.rstrip(b"=").decode(),
                                  len(data))


def _write_wheel(wheel_directory, files):
    """Writes a wheel of `files` ((arcname, bytes) pairs) plus its
    .dist-info; returns its file name."""
    info = _dist() + ".dist-info"
    files = list(files) + [(info + "/METADATA", _metadata()),
                           (info + "/WHEEL", _wheel_file())]
    record = "".join(_record_line(n, d) for n, d in files)
    record += info + "/RECORD,,\n"
    files.append((info + "/RECORD", record.encode("utf-8")))
    name = _dist() + "-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w",
                         zipfile.ZIP_DEFLATED) as z:
        for arcname, data in files:
            entry = zipfile.ZipInfo(arcname, _EPOCH)
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(entry, data)
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory,
                                     config_settings=None):
    info = _dist() + ".dist-info"
    os.makedirs(os.path.join(metadata_directory, info), exist_ok=True)
    for name, data in (("METADATA", _metadata()), ("WHEEL", _wheel_file())):
        with open(os.path.join(metadata_directory, info, name), "wb") as f:
            f.write(data)
    return info


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None,
                metadata_directory=None):
    return _write_wheel(wheel_directory, [(MODULE, _read(MODULE))])


def build_editable(wheel_directory, config_settings=None,
                   metadata_directory=None):
    pth = (HERE + "\n").encode("utf-8")
    return _write_wheel(wheel_directory, [("sweep_client.pth", pth)])


def build_sdist(sdist_directory, config_settings=None):
    base = _dist()
    name = base + ".tar.gz"
    members = [("PKG-INFO", _metadata())]
    for f in ("pyproject.toml", "README.md", MODULE, "_sweep_build.py"):
        members.append((f, _read(f)))
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz",
                      format=tarfile.PAX_FORMAT) as t:
        for arcname, data in members:
            entry = tarfile.TarInfo("%s/%s" % (base, arcname))
            entry.size = len(data)
            entry.mode = 0o644
            t.addfile(entry, io.BytesIO(data))
    return name
