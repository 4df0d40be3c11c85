"""Real bytecode to work on: the JDK's own classes, and JDK sources compiled by javac here.

* :func:`jdk_classes` reads class files straight out of the installed JDK's
  ``jmods`` (a jmod is a zip file behind a four-byte header).
* :func:`compiled_sources` compiles packages of the JDK's sources (Debian's
  ``openjdk-17-source`` ships them as ``src.zip``) with the installed
  ``javac``, patching them into their module, and caches the class files.

Both report a missing JDK or source archive by raising :class:`CorpusUnavailable`
with the reason, so a caller can say "not available" instead of failing.
"""
from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

from pysim.harness.runners import cache_dir

#: Where Debian's openjdk-17-source puts the sources.
SOURCE_ZIPS = ("/usr/lib/jvm/openjdk-17/src.zip", "/usr/lib/jvm/openjdk-17/lib/src.zip")


class CorpusUnavailable(RuntimeError):
    """The JDK, its jmods or its sources are not installed here."""


def java_home() -> Path:
    """The installed JDK (``JAVA_HOME``, else the one ``javac`` belongs to)."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "jmods").is_dir():
        return Path(home)
    javac = shutil.which("javac")
    if javac is None:
        raise CorpusUnavailable("no JDK: javac is not on the PATH (install openjdk-17-jdk-headless)")
    return Path(javac).resolve().parent.parent


def jmods(modules=None) -> list:
    """The jmod files of the installed JDK (all, or the named modules), sorted by name."""
    folder = java_home() / "jmods"
    if not folder.is_dir():
        raise CorpusUnavailable(f"the JDK at {folder.parent} has no jmods")
    found = sorted(folder.glob("*.jmod"))
    if modules is not None:
        wanted = set(modules)
        found = [p for p in found if p.stem in wanted]
        missing = wanted - {p.stem for p in found}
        if missing:
            raise CorpusUnavailable(f"no jmod for modules {sorted(missing)}")
    return found


def jdk_classes(modules=None, *, every: int = 1):
    """Yield ``(module/path, bytes)`` for the class files in the JDK's jmods (every ``every``-th one)."""
    if every < 1:
        raise ValueError(f"every must be >= 1, got {every!r}")
    k = 0
    for jmod in jmods(modules):
        data = jmod.read_bytes()
        if data[:2] != b"JM":
            raise CorpusUnavailable(f"{jmod} is not a jmod file")
        with zipfile.ZipFile(io.BytesIO(data[4:])) as z:
            for name in z.namelist():
                if name.startswith("classes/") and name.endswith(".class") and not name.endswith("module-info.class"):
                    if k % every == 0:
                        yield f"{jmod.stem}/{name[len('classes/'):]}", z.read(name)
                    k += 1


def source_zip() -> Path:
    for p in SOURCE_ZIPS:
        if Path(p).is_file():
            return Path(p)
    raise CorpusUnavailable("the JDK's sources are not installed (Debian package openjdk-17-source)")


def compiled_sources(packages=("java.base/java/util",), *, timeout_s: float = 600) -> Path:
    """Compile the named source packages (``module/path/of/package``, its own files, not
    subpackages) with javac and return the folder of class files (cached by package list and javac).

    Raises
    ------
    CorpusUnavailable
        If javac or the sources are missing, or javac fails (its message included).
    """
    javac = shutil.which("javac")
    if javac is None:
        raise CorpusUnavailable("javac is not installed")
    src = source_zip()
    packages = tuple(sorted(packages))
    key = hashlib.sha256(repr((packages, str(Path(javac).resolve()), src.stat().st_size)).encode()).hexdigest()[:16]
    out = cache_dir() / f"jdk-src-{key}"
    if (out / ".done").exists():
        return out
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(src) as z:
        files_by_module = {}
        for pkg in packages:
            module = pkg.split("/", 1)[0]
            prefix = pkg.rstrip("/") + "/"
            names = [n for n in z.namelist() if n.startswith(prefix) and n.endswith(".java")
                     and "/" not in n[len(prefix):] and not n.endswith("package-info.java")]
            if not names:
                raise CorpusUnavailable(f"no sources for package {pkg} in {src}")
            for n in names:
                z.extract(n, tmp)
            files_by_module.setdefault(module, []).extend(str(Path(tmp) / n) for n in names)
        classes = Path(tmp) / "classes"
        for module, files in files_by_module.items():
            argv = [javac, "-nowarn", "-XDignore.symbol.file", "-implicit:none",
                    f"--patch-module={module}={Path(tmp) / module}", "-d", str(classes / module), *files]
            r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
            if r.returncode != 0:
                raise CorpusUnavailable(f"javac failed on {module}: {r.stderr[-2000:]}")
        if out.exists():
            shutil.rmtree(out)
        shutil.copytree(classes, out)
    (out / ".done").write_text("\n".join(packages))
    return out
