"""The cache guard: numba's cached kernels of the kernels folder go when a source changes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numba.core.caching as numba_caching

import minidl.backends.flex.kernels as kernels
from minidl.backends.flex.kernels.cache_guard import STAMP, cache_folder, guard, sources_digest


def _folder(tmp_path: Path) -> tuple[Path, Path]:
    src, cache = tmp_path / "src", tmp_path / "cache"
    src.mkdir()
    (src / "a.py").write_text("x = 1\n")
    (src / "b.py").write_text("y = 2\n")
    return src, cache


def test_a_changed_source_removes_the_cached_kernels_once(tmp_path):
    src, cache = _folder(tmp_path)
    assert not guard(src, cache)  # no cache yet: nothing to remove, the stamp is written
    assert (cache / STAMP).read_text() == sources_digest(src)
    (cache / "a.f-1.py311.nbi").write_text("index")
    (cache / "a.f-1.py311.1.nbc").write_text("code")
    (cache / "keep.txt").write_text("not numba's")
    assert not guard(src, cache)  # same sources: the cache stays
    assert (cache / "a.f-1.py311.nbi").exists()
    (src / "b.py").write_text("y = 3\n")  # a helper module changed, not the caller's file
    assert guard(src, cache)
    assert not list(cache.glob("*.nb?")) and (cache / "keep.txt").exists()
    assert not guard(src, cache)  # stamped again


def test_the_digest_sees_names_and_contents(tmp_path):
    src, _ = _folder(tmp_path)
    before = sources_digest(src)
    (src / "b.py").rename(src / "c.py")
    assert sources_digest(src) != before


def test_the_cache_folder_is_the_one_numba_uses(tmp_path):
    source = Path(kernels.__file__)
    ours = cache_folder(source, str(tmp_path))
    assert ours == tmp_path / numba_caching._CacheLocator.get_suitable_cache_subpath(str(source))
    assert cache_folder(source, "") == source.parent / "__pycache__"


def test_importing_the_kernels_stamps_the_projects_cache(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    subprocess.run([sys.executable, "-c", "import minidl.backends.flex.kernels"], env=env, check=True)
    stamp = cache_folder(Path(kernels.__file__), str(tmp_path)) / STAMP
    assert stamp.read_text() == sources_digest(Path(kernels.__file__).parent)
