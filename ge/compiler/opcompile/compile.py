"""`compile_ops`: a C kernel for every node placed on AIcoreEngine / VectorEngine, through the
disk cache, in parallel jobs.

Per node: signature -> generated C -> cache key (tagged fields, ge.compiler.cache.key) ->
kernel name `te_<optype>_<sha256>`.  Nodes with equal keys share one kernel.  Cache hits are
verified bytes; misses are compiled by `TE_PARALLEL_COMPILER` worker threads (each runs the
system C compiler as a subprocess) and published.  The result lists kernels in first-use order,
so the OM is the same whatever the number of jobs and whatever was cached.  Progress (`kernels`,
done, total) goes to ge.compiler.progress as each kernel is built, from the calling thread.
The support object and the templates that kernels are built from (build.py) are cache entries
of their own, not counted with the kernels; `prefetch_support` starts the support object's
compile before the passes (docs/cache.md, "The support object and templates").
"""
from __future__ import annotations

import hashlib
import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Mapping, Optional

from ge.graph.attr_names import ATTR_KERNEL_NAME, ATTR_KERNEL_SHA256
from ge.errors import GeError, warn
from ge.fsutil import fault_point, os_reason, publish
from ge.compiler import cache as kcache
from ge.compiler import progress
from ge.compiler.engines import ATTR_ENGINE, COMPILED_ENGINES, kernels_excluded
from . import support
from . import build as _build
from .build import build, clean_stale_build_dirs, compile_flags, link_libs, toolchain
from .cgen import ABI_VERSION, KERNEL_SYMBOL, DataTemplate, Unsupported
from .generators import generator_for
from .signature import signature_of

__all__ = ["KernelRef", "CompiledKernels", "compile_ops", "parallel_jobs", "ATTR_KERNEL_NAME",
           "ATTR_KERNEL_SHA256", "kernel_task", "prefetch_support", "stop_prefetch"]

log = logging.getLogger(__name__)
DEFAULT_JOBS, MAX_JOBS = 8, 32          # TE_PARALLEL_COMPILER (spec/atc-cli.md env table)


@dataclass(frozen=True)
class KernelRef:
    name: str                   # te_<optype>_<sha256 key>: TBE_KERNELS item name, `_kernelname`
    sha256: str                 # sha256 of the binary (integrity check before loading)
    symbol: str                 # exported entry point
    workspace_bytes: int
    size: int


@dataclass
class CompiledKernels:
    kernels: list = field(default_factory=list)          # [(name, bytes)], first-use order
    node_kernels: dict = field(default_factory=dict)     # node name -> KernelRef
    workspace_bytes: dict = field(default_factory=dict)  # node name -> [bytes] (memory plan)
    stats: dict = field(default_factory=dict)            # hits, misses, compiles, ...

    def binary(self, name: str) -> bytes:
        for n, data in self.kernels:
            if n == name:
                return data
        raise KeyError(name)


@dataclass
class _Task:
    name: str
    op_type: str
    source: str
    needs_blas: bool
    flags: tuple
    workspace: int
    meta: dict
    bypass: bool = False
    binary: Optional[bytes] = None
    template: Optional[DataTemplate] = None


def parallel_jobs(env: Optional[Mapping[str, str]] = None) -> int:
    env = os.environ if env is None else env
    raw = (env.get("TE_PARALLEL_COMPILER") or "").strip()
    if not raw:
        return DEFAULT_JOBS
    if raw.isdigit() and 1 <= int(raw) <= MAX_JOBS:
        return int(raw)
    warn("WP0111", {"source": "TE_PARALLEL_COMPILER", "value": raw,
                    "allowed": f"an integer 1..{MAX_JOBS}", "fallback": f"using {DEFAULT_JOBS}"})
    return DEFAULT_JOBS


def kernel_task(sig, soc: str, debug_flags: tuple = ()) -> _Task:
    """Everything about one kernel before compilation: source, key, name, metadata."""
    gen = generator_for(sig.op_type)
    src = gen.render(sig)
    flags = tuple(compile_flags(debug_flags)) + tuple(link_libs(src.needs_blas))
    fields = {
        "op": sig.canonical(),
        "soc": soc,
        "generator": f"{gen.family}/{gen.version}",
        "abi": ABI_VERSION,
        "source_sha256": hashlib.sha256(src.c_source.encode("utf-8")).hexdigest(),
        "flags": list(flags),
        "toolchain": toolchain().identity(src.needs_blas),
    }
    if support.uses_support(src.c_source):
        fields["support_sha256"] = support.SOURCE_SHA256
    key = kcache.kernel_key(fields)
    name = kcache.kernel_name(sig.op_type, key)
    meta = {"symbol": KERNEL_SYMBOL, "abi": ABI_VERSION, "op_type": sig.op_type,
            "workspace_bytes": src.workspace_bytes, "key": key,
            "key_material": kcache.key_material(fields)}
    return _Task(name, sig.op_type, src.c_source, src.needs_blas, tuple(debug_flags),
                 src.workspace_bytes, meta, template=src.template)


def _compiled_nodes(graph) -> list:
    return [n for n in graph.get_all_nodes() if n.attr(ATTR_ENGINE) in COMPILED_ENGINES]


def kernel_meta_dir(options: Mapping[str, str]) -> str:
    """Where debug compiles leave their sources and binaries (atc-cli.md §9.1): `kernel_meta/`
    under --debug_dir, else ASCEND_WORK_PATH, else the working directory."""
    base = (options.get("ge.debugDir") or os.environ.get("ASCEND_WORK_PATH") or os.getcwd())
    return os.path.join(base, "kernel_meta")


SUPPORT_SOURCE_NAME = "ge_support.c"


def write_kernel_meta(tasks: list, options: Mapping[str, str]) -> None:
    """Debug compiles (op_debug_level / op_debug_config) keep `<kernel>.c` and `<kernel>.so`
    for the user to read and to debug with, and `ge_support.c` when a kernel links the support
    object (`cc -shared kernel.c ge_support.c ...` rebuilds it)."""
    if not tasks:
        return
    directory = kernel_meta_dir(options)
    path = directory
    files = [(f"{task.name}{ext}", data) for task in tasks
             for ext, data in ((".c", task.source), (".so", task.binary))]
    if any(support.uses_support(task.source) for task in tasks):
        files.append((SUPPORT_SOURCE_NAME, support.SOURCE))
    try:
        os.makedirs(directory, exist_ok=True)
        for name, data in files:
            path = os.path.join(directory, name)
            publish(path, data, mode=0o644)
    except OSError as exc:      # asked for by the debug options: an error, but a coded one
        raise GeError("E13004", {"file": path, "reason": os_reason(exc)}) from None


ALWAYS_SUPPORT = frozenset({"conv2d"})  # generator families whose kernels all link it


def _object_entry(kind: str, fields: dict) -> tuple:
    """(name, meta) of the cache entry `te_ge_<kind>_<key>` of an object that is not a kernel
    ("support": the support object; "template": a template's binary), keyed like a kernel by
    what determines its bytes."""
    fields = dict(fields, object=kind)
    key = kcache.kernel_key(fields)
    return (kcache.kernel_name(f"ge_{kind}", key),
            {"object": kind, "key": key, "key_material": kcache.key_material(fields)})


def _support_entry() -> tuple:
    """The support object built with the kernels' own flags."""
    return _object_entry("support", {"support_sha256": support.SOURCE_SHA256,
                                     "flags": compile_flags(),
                                     "toolchain": toolchain().identity(False)})


def prefetch_support(graph, options: Mapping[str, str]) -> bool:
    """Start compiling the support object now, before the passes, when the graph has an op
    whose kernels always link it and the kernel cache holds no copy: the compiler runs on the
    core the passes leave idle, and the object is ready when the kernels are linked (cold
    ResNet-50: 0.3 s less, docs/cache.md).  compile_ops waits for it and caches it, or
    stop_prefetch cancels it.  A guess never fails a compile: what it cannot find out (no C
    compiler: a compile whose ops all run on AiCpu needs none) says no."""
    if kernels_excluded(options):
        return False
    families = {gen.family for gen in map(generator_for, {n.type for n in graph.get_all_nodes()})
                if gen is not None}
    if not families & ALWAYS_SUPPORT:
        return False
    try:
        settings = kcache.resolve(options, quiet=True)    # compile_ops' own resolve warns
        if settings.bypass:             # every kernel is built with the debug flags
            return False
        if settings.enabled and settings.mode == "enable":
            name, _ = _support_entry()
            if os.path.lexists(os.path.join(settings.cache_dir, name)):
                return False
    except (GeError, OSError):
        return False
    _build.start_support_object()
    return True


def stop_prefetch() -> None:
    """Cancel a prefetch that no compile_ops waited for (the compile failed before it)."""
    _build.stop_support_object()


def _template_entry(task: _Task) -> tuple:
    """A template's binary (build.py: the kernel text that kernels differing only in data are
    patched copies of)."""
    text = task.template.text
    fields = {"source_sha256": hashlib.sha256(text.encode()).hexdigest(),
              "flags": list(compile_flags()) + link_libs(task.needs_blas),
              "toolchain": toolchain().identity(task.needs_blas)}
    if support.uses_support(text):
        fields["support_sha256"] = support.SOURCE_SHA256
    return _object_entry("template", fields)


def _templates_of(pending: list) -> list:
    """One task per distinct template of the pending kernels (debug builds have none)."""
    return list({(t.template.text, t.needs_blas): t for t in pending
                 if t.template is not None and not t.flags}.values())


def _objects_from_cache(cache, pending: list) -> None:
    """The support object and the templates the pending kernels need, from the cache, when
    this process has none: a new kernel of a known kind is then a link, or a patched copy."""
    if cache.settings.mode != "enable":
        return
    if _build.made_support_object() is None and any(
            support.uses_support(t.source) and not t.flags for t in pending):
        found = cache.own(_support_entry()[0])
        if found is not None:
            _build.provide_support_object((), found[0])
    for task in _templates_of(pending):
        if _build.made_template(task.template, task.needs_blas) is None:
            found = cache.own(_template_entry(task)[0])
            if found is not None:
                _build.provide_template(task.template, task.needs_blas, found[0])


def _keep_objects(cache, pending: list) -> None:
    """Cache the support object and the templates made in this process (a prefetched support
    object is waited for, so that a cache whose kernels all hit gets it too, once); force mode
    replaces them."""
    _build.stop_support_object(finish=True)
    if not cache.writable:
        return
    made = [(_support_entry(), _build.made_support_object())]
    made += [(_template_entry(t), _build.made_template(t.template, t.needs_blas))
             for t in _templates_of(pending)]
    force = cache.settings.mode == "force"
    for (name, meta), binary in made:
        if binary is not None and (force or not os.path.lexists(os.path.join(cache.dir, name))):
            cache.keep(name, binary, meta, replace=force)


def _build_all(pending: list, jobs: int, total: int) -> None:
    """Build every pending task in `jobs` threads, reporting progress as each one is done.  On
    any exception (a kernel that does not build, Ctrl-C) the queued builds are cancelled and the
    running ones waited for, so no cc work directory outlives the call; a build error is that
    of the first failing task in task order, whatever finished first."""
    done = total - len(pending)
    progress.report("kernels", done, total)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(build, t.source, t.needs_blas, t.flags, t.name, t.template): t
                   for t in _submission_order(pending)}
        try:
            for future in as_completed(futures):
                futures[future].binary = future.result()
                done += 1
                progress.report("kernels", done, total)
                if done == total - len(pending) // 2:
                    fault_point("kernels.half")          # test-only; other builds still run
        except BaseException as exc:
            pool.shutdown(wait=True, cancel_futures=True)
            future_of = {id(t): f for f, t in futures.items()}
            failed = [f.exception() for f in (future_of[id(t)] for t in pending)
                      if isinstance(exc, Exception) and not f.cancelled() and f.exception()]
            raise (failed[0] if failed else exc) from None


def _submission_order(pending: list) -> list:
    """The tasks in the order the workers take them: the later kernels of a template after
    all others, as they only wait for its first kernel's compile (build.py) and would hold
    workers that the other kernels' compiles could use meanwhile (cold ResNet-50: its pooling
    and matmul kernels compiled beside the convolution template, not after it)."""
    first, later, templates = [], [], set()
    for task in pending:
        key = (task.template.text, task.needs_blas) if task.template and not task.flags else None
        (later if key is not None and key in templates else first).append(task)
        templates.add(key)
    return first + later


def compile_ops(graph, options: Mapping[str, str]) -> CompiledKernels:
    started = time.monotonic()
    settings = kcache.resolve(options)
    soc = (options.get("ge.socVersion") or "").strip() or "host"
    nodes = _compiled_nodes(graph)
    # nothing to compile (e.g. every op on AiCpu): the cache directory is not even opened
    cache = kcache.KernelCache.open(settings) if settings.enabled and nodes else None
    stats = cache.stats if cache else kcache.CacheStats()
    if nodes:
        clean_stale_build_dirs()        # build directories of killed compiles on this host
    tasks: dict = {}
    node_task: list = []
    for node in nodes:
        gen = generator_for(node.type)
        if gen is None:
            raise GeError("E19999", {"reason": f"{node.name} placed on a compiled engine "
                                               f"without a generator"})
        bypass = bool(settings.bypass) or settings.bypasses(node.name, node.type)
        flags = settings.debug_flags if bypass else ()
        try:
            task = kernel_task(signature_of(node, gen.const_inputs), soc, flags)
        except Unsupported as exc:
            raise GeError("E19999", {"reason": f"kernel of {node.name}: {exc}"}) from None
        task = tasks.setdefault(task.name, task)
        task.bypass = task.bypass or bypass
        node_task.append((node, task))
    pending = []
    for task in tasks.values():
        if task.bypass:
            stats.bypassed += 1
        if cache is not None and not task.bypass and settings.mode == "enable":
            found = cache.get(task.name)
            if found is not None:
                task.binary = found[0]
                continue
        elif cache is not None and not task.bypass:
            stats.misses += 1           # force: never read, always recompile and replace
        pending.append(task)
    jobs = min(parallel_jobs(), max(len(pending), 1))
    if cache is not None:
        _objects_from_cache(cache, pending)
    if pending:
        _build_all(pending, jobs, len(tasks))
        for task in pending:
            stats.compiles += 1
            if cache is not None and not task.bypass:
                cache.put(task.name, task.binary, task.meta, replace=settings.mode == "force")
        write_kernel_meta([t for t in pending if t.bypass], options)
    if cache is not None:
        _keep_objects(cache, pending)
        cache.close()                   # connections to remote stores
    result = CompiledKernels()
    seen = set()
    for node, task in node_task:
        sha = hashlib.sha256(task.binary).hexdigest()
        if task.name not in seen:
            seen.add(task.name)
            result.kernels.append((task.name, task.binary))
        node.set_attr(ATTR_KERNEL_NAME, task.name)
        node.set_attr(ATTR_KERNEL_SHA256, sha)
        result.node_kernels[node.name] = KernelRef(task.name, sha, KERNEL_SYMBOL, task.workspace,
                                                   len(task.binary))
        result.workspace_bytes[node.name] = [task.workspace] if task.workspace else []
    result.stats = dict(stats.as_dict(), kernels=len(result.kernels), nodes=len(node_task),
                        jobs=jobs, mode=settings.mode if settings.enabled else "disable",
                        bypass=settings.bypass, cache_dir=cache.dir if cache else "",
                        seconds=round(time.monotonic() - started, 3))
    log.info("op compile: %(nodes)d nodes, %(kernels)d kernels, hits=%(hits)d "
             "misses=%(misses)d compiles=%(compiles)d evictions=%(evictions)d "
             "corrupt=%(corrupt)d jobs=%(jobs)d mode=%(mode)s cache=%(cache_dir)s "
             "remote_hits=%(remote_hits)d remote_misses=%(remote_misses)d "
             "remote_errors=%(remote_errors)d remote_refused=%(remote_refused)d "
             "remote_bytes=%(remote_bytes_read)d/%(remote_bytes_written)d "
             "remote_seconds=%(remote_seconds).3f remote=%(remote)s", result.stats)
    return result
