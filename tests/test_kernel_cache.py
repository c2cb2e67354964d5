"""Compiled kernels are kept across processes, keyed by everything the binary depends on (issue 39):
the source and the kernels/ headers it includes, the options, the GPU's architecture and the
toolchain. On a CPU, with a fake compiler that keeps its binaries on disk by the code text and the
options as CuPy's RawModule does (an edited header alone used to reuse the old binary)."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

import l2attr.gpu.runtime as runtime
from l2attr.errors import UserError
from l2attr.source import KERNELS_DIR, data_dir


class DiskCompiler:
    """CuPy's RawModule cache in miniature: one file per (code, options), compiled when it is missing."""

    def __init__(self, directory: Path) -> None:
        self.directory, self.compiled = directory, []

    def __call__(self, code: str, options: tuple[str, ...]) -> SimpleNamespace:
        name = hashlib.sha256((code + "\0".join(options)).encode()).hexdigest() + ".cubin"
        if not (self.directory / name).is_file():
            self.compiled.append(code)
            (self.directory / name).write_bytes(b"cubin")
        return SimpleNamespace(code=code, options=options)


def test_a_module_includes_its_headers_through_other_headers(tmp_path: Path) -> None:
    (tmp_path / "a.cuh").write_text('#include "b.cuh"\nint a;\n')
    (tmp_path / "b.cuh").write_text("#include <cuda_fp16.h>\nint b;\n")
    assert runtime.local_headers('#include "a.cuh"\n  # include "missing.cuh"\n', tmp_path) == {
        "a.cuh": '#include "b.cuh"\nint a;\n', "b.cuh": "#include <cuda_fp16.h>\nint b;\n"}
    kdir = data_dir(KERNELS_DIR)
    assert list(runtime.local_headers((kdir / "artifact_consumer.cu").read_text(), kdir)) == ["common.cuh"]


def test_the_key_is_every_input_of_the_binary() -> None:
    base = ("pin_l2.cu", "code", {"common.cuh": "x"}, ("-DA=1",), "sm_90", "cupy 13, nvrtc 12.8")
    key = runtime.kernel_key(*base)
    assert key == runtime.kernel_key(*base)
    for i, other in enumerate(("tuned.cu", "code2", {"common.cuh": "y"}, ("-DA=2",), "sm_100", "cupy 14, nvrtc 13.0")):
        changed = list(base)
        changed[i] = other
        assert runtime.kernel_key(*changed) != key, i


def test_a_second_process_reads_what_the_first_compiled_and_a_header_edit_compiles_again(tmp_path: Path) -> None:
    folder = tmp_path / "kernels"
    compiler = DiskCompiler(folder)
    headers = {"common.cuh": "#define X 1\n"}

    def process() -> dict:
        cache = runtime.KernelCache(folder, compiler)     # a new process: a new cache over the same folder
        for source, options in (("a.cu", ("-DV=1",)), ("a.cu", ("-DV=2",)), ("b.cu", ())):
            module = cache.module(source, f"// {source}\n", headers, options, "sm_90", "cupy 13")
            assert module.code.startswith("// l2attr kernel ") and module.code.endswith(f"// {source}\n")
        return cache.record()

    assert process() == {"dir": str(folder), "modules": 3, "hits": 0, "misses": 3, "seconds": pytest.approx(0, abs=1)}
    assert len(compiler.compiled) == 3
    again = process()
    assert (again["hits"], again["misses"]) == (3, 0) and len(compiler.compiled) == 3
    headers["common.cuh"] = "#define X 2\n"       # the header alone changed: every module is compiled again
    edited = process()
    assert (edited["hits"], edited["misses"]) == (0, 3) and len(compiler.compiled) == 6


def test_without_a_folder_every_module_counts_as_compiled() -> None:
    cache = runtime.KernelCache(None, lambda code, options: code)
    cache.module("a.cu", "x", {}, (), "sm_90", "t")
    assert cache.record()["misses"] == 1 and cache.record()["dir"] is None


@pytest.fixture
def fake_cupy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A cupy module whose RawModule compiles with DiskCompiler into $CUPY_CACHE_DIR, as CuPy reads it."""
    made: list[SimpleNamespace] = []

    class CompileException(Exception):
        pass

    class RawModule:
        def __init__(self, code: str, options: tuple[str, ...], backend: str) -> None:
            self.code, self.options = code, options

        def compile(self) -> None:
            if "#error" in self.code:
                raise CompileException("kern.cu(3): error: broken\nmore lines")
            made.append(DiskCompiler(Path(os.environ["CUPY_CACHE_DIR"]))(self.code, self.options))

        def get_function(self, name: str) -> SimpleNamespace:
            return SimpleNamespace(name=name, code=self.code)

    cupy = ModuleType("cupy")
    cupy.__version__ = "13.6.0"
    cupy.RawModule = RawModule
    cupy.cuda = SimpleNamespace(compiler=SimpleNamespace(CompileException=CompileException),
                                nvrtc=SimpleNamespace(getVersion=lambda: (12, 8)),
                                Device=lambda *a: SimpleNamespace(compute_capability="90"))
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.delenv("CUPY_CACHE_DIR", raising=False)
    monkeypatch.setenv("L2ATTR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(runtime, "_CACHE", [])
    runtime._module.cache_clear()
    yield made
    runtime._module.cache_clear()


def test_get_kernel_compiles_into_the_l2attr_cache_and_records_it(fake_cupy, tmp_path: Path) -> None:
    assert runtime.kernel_cache_record() is None                  # nothing compiled in this process yet
    kernel = runtime.get_kernel(runtime.FLUSH_SPEC)
    runtime.get_kernel(runtime.SPIN_SPEC)                          # the same module: kept in the process
    assert kernel.name == "flush_l2" and kernel.code.startswith("// l2attr kernel ")
    assert os.environ["CUPY_CACHE_DIR"] == str(tmp_path / "cache" / "kernels")
    assert len(list((tmp_path / "cache" / "kernels").iterdir())) == 1
    record = runtime.kernel_cache_record()
    assert record is not None and (record["modules"], record["misses"], record["dir"]) == (
        1, 1, str(tmp_path / "cache" / "kernels"))


def test_a_user_cupy_cache_dir_is_kept(fake_cupy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUPY_CACHE_DIR", str(tmp_path / "mine"))
    runtime.get_kernel(runtime.FLUSH_SPEC)
    assert os.environ["CUPY_CACHE_DIR"] == str(tmp_path / "mine") and len(list((tmp_path / "mine").iterdir())) == 1


def test_a_compile_error_is_one_line(fake_cupy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kdir = tmp_path / "kernels_src"
    kdir.mkdir()
    (kdir / "bad.cu").write_text("#error no\n")
    monkeypatch.setattr(runtime, "data_dir", lambda name: kdir)
    with pytest.raises(UserError, match=r"^compiling bad.cu -DX=1 failed: kern.cu\(3\): error: broken$"):
        runtime.get_kernel(runtime.KernelSpec("bad.cu", "f", ("-DX=1",)))


@pytest.fixture
def cupy14(fake_cupy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """CuPy 14's shape: its compiler module holds a disk backend made at import from the $CUPY_CACHE_DIR
    of that moment (here unset: CuPy's default folder), and RawModule writes through that backend."""
    made = fake_cupy

    class DiskKernelCacheBackend:
        def __init__(self, cache_dir: str) -> None:
            self._cache_dir = cache_dir
            Path(cache_dir).mkdir(parents=True, exist_ok=True)

    compiler = ModuleType("cupy.cuda.compiler")
    compiler.CompileException = sys.modules["cupy"].cuda.compiler.CompileException
    compiler._kernel_cache_backend = DiskKernelCacheBackend(str(tmp_path / "cupy-default"))

    def set_backend(backend: DiskKernelCacheBackend) -> None:
        compiler._kernel_cache_backend = backend
    compiler._set_kernel_cache_backend = set_backend
    cache_mod = ModuleType("cupy.cuda._compiler_cache")
    cache_mod.DiskKernelCacheBackend = DiskKernelCacheBackend
    cupy = sys.modules["cupy"]
    cupy.cuda.compiler = compiler

    def compile_(self) -> None:        # through the backend, whatever the variable says now
        made.append(DiskCompiler(Path(compiler._kernel_cache_backend._cache_dir))(self.code, self.options))
    monkeypatch.setattr(cupy.RawModule, "compile", compile_)
    monkeypatch.setitem(sys.modules, "cupy.cuda", cupy.cuda)
    monkeypatch.setitem(sys.modules, "cupy.cuda.compiler", compiler)
    monkeypatch.setitem(sys.modules, "cupy.cuda._compiler_cache", cache_mod)
    return compiler


def test_cupy_14s_backend_is_pointed_at_the_l2attr_cache(cupy14, tmp_path: Path) -> None:
    """CuPy 14 read its folder at import, before l2attr set the variable: without the new backend the
    binaries went to CuPy's default folder and a cold process recorded every module as a hit."""
    runtime.get_kernel(runtime.FLUSH_SPEC)
    kernels = tmp_path / "cache" / "kernels"
    assert cupy14._kernel_cache_backend._cache_dir == str(kernels)
    assert len(list(kernels.iterdir())) == 1 and not list((tmp_path / "cupy-default").iterdir())
    record = runtime.kernel_cache_record()
    assert record is not None and (record["dir"], record["hits"], record["misses"]) == (str(kernels), 0, 1)


def test_where_cupy_keeps_its_folder_the_record_names_and_counts_that_one(
        cupy14, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(cupy14, "_set_kernel_cache_backend")          # a CuPy without the setter
    runtime.get_kernel(runtime.FLUSH_SPEC)
    record = runtime.kernel_cache_record()
    assert record is not None and (record["dir"], record["misses"]) == (str(tmp_path / "cupy-default"), 1)
