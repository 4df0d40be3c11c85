"""System calls: how a program crosses into the kernel, what an interposer adds, and call mixes.

Three pieces, all priced as :class:`pysim.sw.costs.Recipe` operations on a
:class:`pysim.hw.CpuCostModel`:

* :class:`CallPath` says how one call enters the kernel: a plain trap, a
  user-level loop step plus a trap, an operation interpreted inside a
  kernel-resident compound (one trap for many calls). :func:`calls` turns
  ``n`` calls with their kernel work and copies into :class:`Work`.
* :class:`Interposer` is one layer that catches calls on the way in: a
  dispatcher, a chain of extensions, a bounce to a user-level handler
  (ptrace, seccomp user notification), each an operation priced per caught
  call. :func:`interposed` adds the layers' work over a :class:`SyscallMix`.
* :class:`SyscallMix` counts calls by name (and the bytes they move), from
  a generator, by hand, or from a real ``strace`` log or ``strace -c``
  summary.

The slowdown that interposition causes is then
``1 + interposed(mix, layers).seconds / base_seconds``:

>>> from pysim.hw import CpuCostModel
>>> cpu = CpuCostModel(1e9, fixed_s={"trap": 1e-6, "dispatch": 2e-7, "extension": 1e-7})
>>> mix = SyscallMix({"read": 1000, "getpid": 10})
>>> slic = Interposer("slic", catches=frozenset({"read"}), per_call=Work(system=Recipe(ops={"dispatch": 1})),
...                   per_extension=Work(system=Recipe(ops={"extension": 1})), extensions=3)
>>> round(sum(interposed(mix, [slic]).seconds(cpu)) * 1e6, 3)
500.0
"""
from __future__ import annotations

import re
import types
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from pysim.sw.costs import Recipe, Work

#: Linux system calls by class, for mixes and for interposers that catch a class.
CLASSES = types.MappingProxyType({
    "file": ("read", "write", "pread64", "pwrite64", "readv", "writev", "openat", "open", "close", "lseek",
             "newfstatat", "fstat", "stat", "lstat", "statx", "access", "faccessat", "faccessat2", "getdents64",
             "readlink", "readlinkat", "unlink", "unlinkat", "rename", "renameat", "renameat2", "mkdir",
             "mkdirat", "rmdir", "fcntl", "ioctl", "dup", "dup2", "dup3", "fsync", "fdatasync", "ftruncate",
             "truncate", "chmod", "fchmod", "fchmodat", "chown", "fchown", "utimensat", "getcwd", "chdir",
             "fchdir", "pipe", "pipe2", "sendfile", "copy_file_range", "umask", "statfs", "fstatfs",
             "symlink", "symlinkat", "link", "linkat", "fadvise64", "flock"),
    "process": ("execve", "clone", "clone3", "fork", "vfork", "wait4", "waitid", "exit", "exit_group",
                "getpid", "getppid", "gettid", "getuid", "geteuid", "getgid", "getegid", "setpgid",
                "getpgrp", "setsid", "prlimit64", "getrlimit", "setrlimit", "arch_prctl", "set_tid_address",
                "set_robust_list", "rseq", "prctl", "uname", "sched_yield", "sched_getaffinity",
                "getrusage", "times", "futex", "getrandom", "capget", "capset"),
    "memory": ("mmap", "munmap", "mprotect", "brk", "mremap", "madvise", "msync", "mlock", "munlock"),
    "signal": ("rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "kill", "tgkill", "sigaltstack",
               "rt_sigsuspend", "rt_sigtimedwait", "alarm", "pause"),
    "time": ("clock_gettime", "gettimeofday", "time", "nanosleep", "clock_nanosleep", "setitimer",
             "getitimer", "timerfd_create", "timerfd_settime"),
    "network": ("socket", "connect", "accept", "accept4", "bind", "listen", "sendto", "recvfrom", "sendmsg",
                "recvmsg", "sendmmsg", "recvmmsg", "shutdown", "getsockname", "getpeername", "setsockopt",
                "getsockopt", "socketpair"),
    "wait": ("select", "pselect6", "poll", "ppoll", "epoll_create1", "epoll_ctl", "epoll_wait",
             "epoll_pwait", "eventfd2"),
})
_CLASS_OF = {name: cls for cls, names in CLASSES.items() for name in names}
#: Calls whose return value is the number of bytes moved between the user and the kernel.
BYTE_CALLS = frozenset({"read", "write", "pread64", "pwrite64", "readv", "writev", "sendto", "recvfrom",
                        "sendmsg", "recvmsg", "sendfile", "copy_file_range"})


def class_of(name: str) -> str:
    """The class of a system call (``"other"`` for one :data:`CLASSES` does not list)."""
    return _CLASS_OF.get(name, "other")


def _counts(table, what: str) -> dict:
    out = {}
    for name, n in dict(table).items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"{what}: a system call is named by a non-empty string, got {name!r}")
        if name in CLASSES or name == "other":  # an interposer catching that class would catch it by name
            raise ValueError(f"{what}: {name!r} names a class of calls, not a call; use another name")
        if not n >= 0:
            raise ValueError(f"{what}[{name!r}] must be >= 0, got {n!r}")
        out[name] = n
    return out


@dataclass(frozen=True)
class SyscallMix:
    """How many times each system call runs (``counts``) and the bytes each moves in all (``nbytes``)."""

    counts: Mapping = field(default_factory=dict)
    nbytes: Mapping = field(default_factory=dict)

    def __post_init__(self):
        counts, nbytes = _counts(self.counts, "counts"), _counts(self.nbytes, "nbytes")
        stray = set(nbytes) - set(counts)
        if stray:
            raise ValueError(f"bytes given for calls that never run: {sorted(stray)}")
        object.__setattr__(self, "counts", types.MappingProxyType(counts))
        object.__setattr__(self, "nbytes", types.MappingProxyType(nbytes))

    @property
    def total(self) -> float:
        """Calls in all."""
        return sum(self.counts.values())

    def by_class(self) -> dict:
        """Calls per class (see :func:`class_of`)."""
        out = {}
        for name, n in self.counts.items():
            out[class_of(name)] = out.get(class_of(name), 0) + n
        return out

    def only(self, names: Iterable[str] | None = None, classes: Iterable[str] | None = None) -> "SyscallMix":
        """The calls named, or of the classes named (both: either)."""
        names, classes = set(names or ()), set(classes or ())
        unknown = classes - set(CLASSES) - {"other"}
        if unknown:
            raise ValueError(f"unknown classes {sorted(unknown)}; known: {sorted(CLASSES)} and 'other'")
        keep = [c for c in self.counts if c in names or class_of(c) in classes]
        return SyscallMix({c: self.counts[c] for c in keep}, {c: self.nbytes[c] for c in keep if c in self.nbytes})

    def __add__(self, other: "SyscallMix") -> "SyscallMix":
        if not isinstance(other, SyscallMix):
            return NotImplemented
        counts, nbytes = dict(self.counts), dict(self.nbytes)
        for c, n in other.counts.items():
            counts[c] = counts.get(c, 0) + n
        for c, n in other.nbytes.items():
            nbytes[c] = nbytes.get(c, 0) + n
        return SyscallMix(counts, nbytes)

    def __mul__(self, k: float) -> "SyscallMix":
        if not k >= 0:
            raise ValueError(f"a mix scales by a count >= 0, got {k!r}")
        return SyscallMix({c: n * k for c, n in self.counts.items()}, {c: n * k for c, n in self.nbytes.items()})

    __rmul__ = __mul__

    def rate(self, seconds: float) -> float:
        """Calls per second over a run of ``seconds``."""
        if not seconds > 0:
            raise ValueError(f"seconds must be > 0, got {seconds!r}")
        return self.total / seconds


# --- strace ---------------------------------------------------------------------------------------

_SUMMARY_ROW = re.compile(r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:(\d+)\s+)?([a-z_0-9]+)\s*$")
_LOG_LINE = re.compile(r"^(?:\[pid\s+\d+\]\s+|\d+\s+)?(?:[\d:.]+\s+)?([a-z_0-9]+)\((.*)\)\s+=\s+(-?\d+|\?)")
_RESUMED = re.compile(r"^(?:\[pid\s+\d+\]\s+|\d+\s+)?(?:[\d:.]+\s+)?<\.\.\. ([a-z_0-9]+) resumed>.*=\s+(-?\d+|\?)")
_EVENT = re.compile(r"^(?:\[pid\s+\d+\]\s+|\d+\s+)?(?:[\d:.]+\s+)?(?:---|\+\+\+) ")
_UNFINISHED = re.compile(r"^(?:\[pid\s+\d+\]\s+|\d+\s+)?(?:[\d:.]+\s+)?([a-z_0-9]+)\(.*<unfinished \.\.\.>\s*$")


def parse_strace_summary(text: str) -> SyscallMix:
    """The mix in an ``strace -c`` summary table (calls per system call; no bytes).

    Raises
    ------
    ValueError
        If the text holds no summary rows.
    """
    counts = {}
    for line in text.splitlines():
        m = _SUMMARY_ROW.match(line)
        if m and m.group(3) != "total":
            counts[m.group(3)] = counts.get(m.group(3), 0) + int(m.group(1))
    if not counts:
        raise ValueError("no strace -c summary rows in the text (is it an strace -c output?)")
    return SyscallMix(counts)


def parse_strace_log(text: str) -> SyscallMix:
    """The mix in an ``strace`` log, one call per line (with or without ``-f`` pids and ``-t`` times).

    Calls split by another process's output (``<unfinished ...>`` and
    ``<... resumed>``) count once. The bytes of :data:`BYTE_CALLS` are their
    non-negative return values. Signals and exits are skipped, so a log of
    a run that made none of the calls traced gives an empty mix.

    Raises
    ------
    ValueError
        If the text has lines but none is a call, a signal or an exit.
    """
    counts, nbytes, strace_lines = {}, {}, 0
    for line in text.splitlines():
        if _UNFINISHED.match(line) or _EVENT.match(line):
            strace_lines += 1
            continue  # a split call is counted when it resumes
        m = _RESUMED.match(line) or _LOG_LINE.match(line)
        if not m:
            continue
        name, ret = m.group(1), m.group(m.lastindex)
        counts[name] = counts.get(name, 0) + 1
        if name in BYTE_CALLS and ret not in ("?",) and int(ret) > 0:
            nbytes[name] = nbytes.get(name, 0) + int(ret)
    if not counts and text.strip() and not strace_lines:
        raise ValueError("no system calls in the text (is it an strace log?)")
    return SyscallMix(counts, nbytes)


# --- crossing ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CallPath:
    """How one system call gets into the kernel and back.

    Parameters
    ----------
    user, system : Recipe
        Work per call in user mode (a libc wrapper, a loop step that issues
        the call) and in the kernel (the trap, or an interpreter step when the
        call is an operation of a kernel-resident compound).
    copies_out : bool
        False when the call leaves its result in a buffer the user shares
        with the kernel, so nothing is copied out.
    """

    user: Recipe = Recipe()
    system: Recipe = Recipe(ops={"trap": 1})
    copies_out: bool = True


#: A plain trap per call and copies both ways.
TRAP = CallPath()
_NO_WORK = Recipe()


def calls(n: float, kernel: Recipe = _NO_WORK, *, path: CallPath = TRAP, copy_in: float = 0,
          copy_out: float = 0) -> Work:
    """``n`` system calls that each do ``kernel`` work and copy ``copy_in`` bytes from the user and
    ``copy_out`` bytes to the user, entering the kernel by ``path``."""
    if not n >= 0:
        raise ValueError(f"n must be >= 0 calls, got {n!r}")
    moved = Recipe(nbytes={"copy": copy_in + (copy_out if path.copies_out else 0)})
    return Work(path.user * n, (path.system + kernel + moved) * n)


def mix_work(mix: SyscallMix, kernel: Mapping, *, path: CallPath = TRAP, copies: bool = True) -> Work:
    """The work of running ``mix``: each call's crossing by ``path`` and its kernel work, looked up
    by name, else by class, in ``kernel`` (a mapping to Recipes); with ``copies``, the mix's bytes
    are copied once each.

    Raises
    ------
    KeyError
        If a call has no kernel work by name or by class.
    """
    total = Work()
    for name, n in mix.counts.items():
        work = kernel.get(name, kernel.get(class_of(name)))
        if work is None:
            raise KeyError(f"no kernel work for {name!r} (class {class_of(name)!r}); "
                           f"priced: {sorted(kernel)}")
        nbytes = mix.nbytes.get(name, 0) if copies else 0
        total = total + calls(n, work, path=path) + Work(system=Recipe(nbytes={"copy": nbytes}))
    return total


# --- interposition ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Interposer:
    """One layer that catches system calls on their way into the kernel.

    Parameters
    ----------
    name : str
        What the layer is (for breakdowns and errors).
    catches : frozenset of str, or None
        The calls it catches, by name or class; None catches every call.
    per_call : Work
        What catching one call costs, whatever the layer does with it (a
        dispatcher's lookup, a bounce to a user-level handler and back).
    per_extension : Work
        What each extension in the layer's chain adds per caught call.
    extensions : int
        How many extensions the chain holds.
    """

    name: str
    catches: frozenset | None = None
    per_call: Work = Work()
    per_extension: Work = Work()
    extensions: int = 0

    def __post_init__(self):
        if not (isinstance(self.extensions, int) and self.extensions >= 0):
            raise ValueError(f"Interposer {self.name!r}: extensions must be an int >= 0, got {self.extensions!r}")
        if self.catches is not None:
            object.__setattr__(self, "catches", frozenset(self.catches))

    def caught(self, mix: SyscallMix) -> float:
        """How many calls of ``mix`` this layer catches."""
        if self.catches is None:
            return mix.total
        return sum(n for c, n in mix.counts.items() if c in self.catches or class_of(c) in self.catches)

    def work(self, n_caught: float) -> Work:
        """The layer's work for ``n_caught`` calls."""
        return (self.per_call + self.per_extension * self.extensions) * n_caught


def interposed(mix: SyscallMix, layers: Iterable[Interposer]) -> Work:
    """The work the ``layers`` add to running ``mix`` (each catches its own share)."""
    total = Work()
    for layer in layers:
        total = total + layer.work(layer.caught(mix))
    return total


def slowdown(base_s: float, added_s: float) -> float:
    """How many times longer a run of ``base_s`` seconds takes with ``added_s`` more."""
    if not base_s > 0:
        raise ValueError(f"base_s must be > 0, got {base_s!r}")
    if not added_s >= 0:
        raise ValueError(f"added_s must be >= 0, got {added_s!r}")
    return 1.0 + added_s / base_s
