"""System calls: crossing paths, interposers over mixes, strace parsing, and a real traced run."""
import shutil

import pytest

from pysim.harness import traced_run
from pysim.hw import CpuCostModel
from pysim.sw import Recipe, Work, fit_residual, syscalls
from pysim.sw.syscalls import CallPath, Interposer, SyscallMix, interposed
from pysim.workloads.syscalls import call_sequence, call_times, copy_mix

CPU = CpuCostModel(1e9, fixed_s={"trap": 1e-6, "loop": 1e-7, "interp": 3e-7, "dispatch": 2e-7, "ext": 5e-8,
                                 "bounce": 4e-6, "vfs": 5e-7},
                   per_byte_s={"copy": 1e-9})

SUMMARY = """\
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 40.12    0.001656         414         4         2 wait4
 12.19    0.000503           7        63        16 newfstatat
  6.93    0.000286           4        69        26 openat
  2.81    0.000116           8        13           read
------ ----------- ----------- --------- --------- ----------------
100.00    0.004128           9       149        44 total
"""

LOG = """\
4101  openat(AT_FDCWD, "/etc/hostname", O_RDONLY) = 3
4101  read(3, "vm\\n", 131072) = 3
4102  read(0,  <unfinished ...>
4101  write(1, "vm\\n", 3) = 3
4102  <... read resumed>"abc", 100) = 3
4101  read(3, "", 131072)               = 0
4101  read(7, 0x7ffd, 10) = -1 EBADF (Bad file descriptor)
4101  --- SIGCHLD {si_signo=SIGCHLD} ---
4101  +++ exited with 0 +++
"""


def test_a_call_entering_from_a_user_loop_pays_the_loop_in_user_mode_and_the_trap_in_the_kernel():
    path = CallPath(user=Recipe(ops={"loop": 1}), system=Recipe(ops={"trap": 1}))
    user, system = syscalls.calls(10, Recipe(ops={"vfs": 1}), path=path, copy_in=100, copy_out=50).seconds(CPU)
    assert user == pytest.approx(10 * 1e-7)
    assert system == pytest.approx(10 * (1e-6 + 5e-7 + 150e-9))


def test_a_shared_buffer_saves_the_copy_out_but_not_the_copy_in():
    shared = CallPath(system=Recipe(ops={"interp": 1}), copies_out=False)
    _, system = syscalls.calls(4, path=shared, copy_in=1000, copy_out=4096).seconds(CPU)
    assert system == pytest.approx(4 * (3e-7 + 1000e-9))


def test_an_interposer_chain_costs_the_dispatcher_plus_each_extension_per_caught_call():
    mix = SyscallMix({"read": 600, "write": 400, "getpid": 50, "mmap": 7})
    chain = [Interposer("slic", catches=frozenset({"file"}), per_call=Work(system=Recipe(ops={"dispatch": 1})),
                        per_extension=Work(system=Recipe(ops={"ext": 1})), extensions=k) for k in (0, 1, 4)]
    added = [sum(interposed(mix, [layer]).seconds(CPU)) for layer in chain]
    assert added[0] == pytest.approx(1000 * 2e-7)  # read and write are file calls; getpid and mmap are not
    assert added[2] - added[1] == pytest.approx(3 * 1000 * 5e-8)


def test_a_user_level_bounce_on_every_call_costs_more_than_a_dispatcher_on_some():
    mix = SyscallMix({"read": 100, "getpid": 100})
    bounce = Interposer("ptrace", per_call=Work(system=Recipe(ops={"bounce": 1})))
    assert bounce.caught(mix) == 200
    slow = syscalls.slowdown(1e-3, sum(interposed(mix, [bounce]).seconds(CPU)))
    assert slow == pytest.approx(1 + 200 * 4e-6 / 1e-3)


def test_a_mix_is_priced_by_call_then_by_class_and_a_missing_price_is_named():
    mix = SyscallMix({"read": 3, "openat": 1}, {"read": 2048})
    work = syscalls.mix_work(mix, {"read": Recipe(ops={"vfs": 2}), "file": Recipe(ops={"vfs": 1})})
    assert work.system.ops["vfs"] == 3 * 2 + 1
    assert work.system.nbytes["copy"] == 2048
    with pytest.raises(KeyError, match="no kernel work for 'mmap'"):
        syscalls.mix_work(SyscallMix({"mmap": 1}), {"file": Recipe()})


def test_the_strace_summary_and_log_are_read_as_strace_writes_them():
    summary = syscalls.parse_strace_summary(SUMMARY)
    assert dict(summary.counts) == {"wait4": 4, "newfstatat": 63, "openat": 69, "read": 13}
    log = syscalls.parse_strace_log(LOG)
    assert dict(log.counts) == {"openat": 1, "read": 4, "write": 1}  # the split read counts once
    assert dict(log.nbytes) == {"read": 6, "write": 3}                 # errors and EOF move nothing
    with pytest.raises(ValueError, match="no system calls"):
        syscalls.parse_strace_log("hello\n")
    assert syscalls.parse_strace_log("4101  +++ exited with 0 +++\n").total == 0


def test_bad_mixes_and_layers_are_refused_with_the_reason():
    with pytest.raises(ValueError, match="must be >= 0"):
        SyscallMix({"read": -1})
    with pytest.raises(ValueError, match="names a class"):
        SyscallMix({"file": 3})
    with pytest.raises(ValueError, match="never run"):
        SyscallMix({"read": 1}, {"write": 10})
    with pytest.raises(ValueError, match="unknown classes"):
        SyscallMix({"read": 1}).only(classes=["disk"])
    with pytest.raises(ValueError, match="extensions"):
        Interposer("x", extensions=-1)


def test_a_residual_is_named_and_a_recipe_that_already_costs_too_much_is_refused():
    recipe = Recipe(ops={"trap": 2})
    with_rest, cpu = fit_residual(recipe, CPU, 5e-6, "lrmi_residual")
    assert with_rest.seconds(cpu) == pytest.approx(5e-6)
    assert with_rest.breakdown(cpu)["lrmi_residual"] == pytest.approx(3e-6)
    with pytest.raises(ValueError, match="more than the"):
        fit_residual(recipe, CPU, 1e-6, "rest")
    with pytest.raises(ValueError, match="already an operation"):
        fit_residual(recipe, CPU, 5e-6, "trap")


def test_generated_sequences_keep_the_mix_and_poisson_times_the_rate():
    mix = SyscallMix({"read": 2, "write": 1, "close": 1})
    seq = call_sequence(mix, 20_000, rng=3)
    assert abs((seq == "read").mean() - 0.5) < 0.02
    times, names = call_times(mix, 1000.0, 5.0, rng=4)
    assert len(times) == len(names) and abs(len(times) - 5000) < 4 * 5000 ** 0.5
    assert (times[1:] >= times[:-1]).all()
    with pytest.raises(ValueError, match="no calls"):
        call_sequence(SyscallMix({}), 3)


@pytest.mark.skipif(shutil.which("strace") is None or shutil.which("dd") is None, reason="needs strace and dd")
def test_a_real_dd_makes_the_calls_its_loop_counts_and_tracing_every_call_costs_more_than_tracing_none(tmp_path):
    src = tmp_path / "in"
    src.write_bytes(b"x" * 40960)
    argv = ["dd", f"if={src}", f"of={tmp_path / 'out'}", "bs=4096", "status=none"]
    run = traced_run(argv, trace="read,write", tries=1)
    if not run.available:
        pytest.skip(run.reason)
    counted = copy_mix(40960, 4096)
    assert run.mix.counts["write"] == counted.counts["write"] == 10
    assert run.mix.nbytes["write"] == 40960
    assert run.mix.counts["read"] >= counted.counts["read"]  # the loader reads libraries too
    # a byte at a time: 2 x 20,000 calls, every one stopping the process, against a filter that stops none
    tiny = ["dd", f"if={src}", f"of={tmp_path / 'out2'}", "bs=1", "count=20000", "status=none"]
    every = traced_run(tiny, trace="read,write", tries=3)
    none = traced_run(tiny, trace="getppid", tries=3)
    assert every.mix.counts["read"] >= 20000
    assert every.slowdown > 2 * none.slowdown
