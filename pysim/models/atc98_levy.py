"""The Safe-Tcl security model (Levy, Demailly, Ousterhout & Welch, USENIX ATC 1998).

Regenerates Table 1 (direct calls against calls through an alias from
another interpreter: the built-in pid, a null procedure, a procedure of ten
arguments, one that adds its ten arguments, a ten-element list reversal) on
the paper's Pentium 233 with Tcl 8.0, and the policy examples of §4-§6 and
§8 as decisions of the Safe-Tcl mechanism (``policies``): Figure 2's socket
alias, the safe base's hidden commands, the home and outside policies, the
trust map, the rule of one policy per applet and the leak it prevents (§5:
safe features do not compose), the byte-counting output alias.

First principles. A call is counted as operations (:class:`pysim.sw.Recipe`):
dispatching a command from compiled code (``call``), a Tcl procedure's frame
(``frame``), binding one argument (``arg``), one bytecode instruction
(``bytecode``), the C work of a list command (``list_command``), getpid's
system call (``trap``). A call through an alias is the same call plus the
alias's forwarding (``proxy``: the alias command preserves the target
interpreter, resets its result and invokes the target there), Tcl 8.0's
lookup of the target by name on every call (``lookup``), and a ``marshal``
per word moved between the interpreters: Tcl 8.0 passes the caller's
argument vector on as it is and moves only the result object; Tcl 8.6
copies every word. Unit costs are instruction counts of Tcl 8.0's code paths
(assumed, each with its reason) at one cycles-per-instruction on the
233 MHz clock; getpid's trap is in cycles. The procedures are the lab's
(:data:`BENCHMARK_PROCS`); the paper names them but does not print them.
The policy model is a small interpreter of the mechanism
(:class:`SafeTclHost`): commands hidden in the safe interpreter, aliases
whose targets in the master check their arguments, policies as sections of
allow statements, a trust map with an authenticator; every switch of it is
a Params field, so each claim has a counterfactual.

Calibrated: the cycles per instruction, on Table 1's one legible cell (the
alias to the lreverse procedure). Predicted: the ratio of the alias to the
null procedure and the null procedure (§9.1's "about twice"), which the
fit does not touch (it scales every row alike).

Then vs now (real, on this machine): the same procedures timed with Tcl's
``time`` in a real safe interpreter, directly and through ``interp alias``
into the master (:func:`timing_script`, :func:`then_and_now`), the alias's
forwarding and per-word cost fitted on two rows and the other alias rows
predicted (:func:`alias_fit`); the policies run in a real safe interpreter
with the paper's Tcl (:func:`policy_script`, :func:`policies_then_and_now`).

Not reproduced: Table 1's other nine cells, lost in the text.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pandas as pd

from pysim.hw import CpuCostModel
from pysim.models import Counterfactual, Fit
from pysim.params import ModelParams, assumed, calibrated, stated
from pysim.sw import Recipe, fit_residual
from pysim.units import MHz, us
from pysim.harness.exclusive import one_core

#: Table 1's benchmarks, in the paper's order (§9.1), each called directly and through an alias.
BENCHMARKS = ("pid", "null proc", "10arg proc", "10add proc", "lreverse proc")
ALIAS = "alias to "
ROWS = tuple(r for b in BENCHMARKS for r in (b, ALIAS + b))
#: Arguments each benchmark passes.
ARGS = {"pid": 0, "null proc": 0, "10arg proc": 10, "10add proc": 10, "lreverse proc": 1}

#: The procedures, in Tcl. The paper describes them (§9.1) without printing them.
BENCHMARK_PROCS = r"""
proc nullproc {} {}
proc arg10 {a b c d e f g h i j} {}
proc add10 {a b c d e f g h i j} {expr {$a+$b+$c+$d+$e+$f+$g+$h+$i+$j}}
proc lreverse {l} {
    set r {}
    set i [llength $l]
    while {$i > 0} {
        incr i -1
        lappend r [lindex $l $i]
    }
    return $r
}
"""
#: The Tcl command that runs each benchmark, and the alias (in the safe interpreter) to its target.
CALLS = {
    "pid": ("pid", "a_pid", "pid"),
    "null proc": ("nullproc", "a_null", "nullproc"),
    "10arg proc": ("arg10 1 2 3 4 5 6 7 8 9 10", "a_arg10 1 2 3 4 5 6 7 8 9 10", "arg10"),
    "10add proc": ("add10 1 2 3 4 5 6 7 8 9 10", "a_add10 1 2 3 4 5 6 7 8 9 10", "add10"),
    "lreverse proc": ("lreverse $L", "a_lreverse $L", "lreverse"),
}


@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs. Instruction counts of Tcl 8.0's code paths on the Pentium 233; policies as §4-§6 write them."""

    # --- Table 1: the machine and the benchmarks (§9.1)
    clock_hz: float = stated(233 * MHz, "§9.1: measurements were taken on a Pentium 233 running Linux")
    proc_args: int = stated(10, "§9.1: a procedure taking ten arguments; one that adds its ten numeric arguments",
                            ge=1, le=100)
    list_length: int = stated(10, "§9.1: a ten element list reversal procedure", ge=1, le=10_000)
    cycles_per_instruction: float = calibrated(3.39668, "the interpreter's instructions on the 233 MHz Pentium",
                                               gt=0.1, le=50.0)
    # --- unit costs, in instructions of Tcl 8.0's C code
    call_instructions: float = assumed(200.0, "INST_INVOKE_STK: the command from the name object's cached "
                                            "pointer, the interpreter's result reset, the call, the result "
                                            "pushed and the argument words released")
    frame_instructions: float = assumed(700.0, "TclObjInterpProc: the body's bytecode checked for staleness, "
                                             "Tcl_PushCallFrame, Tcl_EvalObj into TclExecuteByteCode and out, "
                                             "Tcl_PopCallFrame, the result and return code handled")
    arg_instructions: float = assumed(50.0, "an argument pushed by the caller, its compiled local initialised and "
                                          "bound (a reference count), released when the frame is popped")
    bytecode_instructions: float = assumed(40.0, "one bytecode instruction: fetch, switch, operands, the stack "
                                               "and reference counts (a scalar load ~25, an integer add ~60)")
    list_command_instructions: float = assumed(200.0, "lindex, lappend or llength run as a command in Tcl 8.0: "
                                                    "argument checks, the list's internal form, lappend's "
                                                    "variable looked up by name and set")
    trap_cycles: float = assumed(300.0, "getpid() on Linux 2.0: int 0x80, the register save and restore, the "
                                      "return path's checks (lmbench's null call on Pentiums of the time, about "
                                      "a microsecond)")
    proxy_instructions: float = assumed(250.0, "Tcl 8.0's AliasCmd besides the lookup: the nesting level, "
                                             "Tcl_Preserve and Tcl_Release of the target interpreter (a scan "
                                             "of the preserved list each), two Tcl_ResetResult calls, the "
                                             "extra C call and the return-code checks")
    lookup_instructions: float = assumed(300.0, "Tcl_FindCommand(targetName) in the master's global namespace: "
                                              "the resolvers checked, the name scanned for '::' into a "
                                              "Tcl_DString, the command table's string hash and compare")
    marshal_instructions: float = assumed(20.0, "one word moved between interpreters: a pointer stored with "
                                              "its reference counts (Tcl_SetObjResult for the result)", ge=0)
    # --- how the alias crosses (switches)
    target_by_name: bool = assumed(True, "Tcl 8.0's AliasCmd looks the target up by name on every call")
    copies_arguments: bool = assumed(False, "Tcl 8.0's AliasCmd hands the caller's argument vector to the target "
                                            "when the alias has no prefix words; only the result object moves")
    compiled_list_commands: bool = assumed(False, "Tcl 8.0 compiled set, incr, expr and the control structures "
                                                  "and ran lindex, lappend and llength as commands (8.4 compiled "
                                                  "them)")
    # --- the policies (§4-§6, §8)
    safe_interpreter: bool = stated(True, "§4: applets run in a safe interpreter whose unsafe commands are hidden")
    aliases_check: bool = stated(True, "§4: the alias validates the host and port, then invokes the protected "
                                       "socket command; §5: the target command checks the arguments")
    one_policy_per_applet: bool = stated(True, "§5: an applet may obtain at most a single security policy over "
                                               "its lifetime")
    trust_map_enforced: bool = stated(True, "§6: the trust map decides whether an applet can use a policy")
    safe_sockets: tuple = stated((("sage.eng", (1024,)), ("sunlabs.eng", (80,)), ("www.sun.com", (80, 8015)),
                                  ("bisque.eng", (3000, 4000, 5000))),
                                 "Figure 2: the safeSockets array of acceptable hosts and ports")
    output_limit_bytes: int = assumed(1000, "§8 names no limit for the byte-counting puts alias", ge=1)
    policy_features: tuple = stated((("home", ("url", "network", "persist")),
                                     ("outside", ("persist", "url", "network")), ("reader", ("fileread",)),
                                     ("javascript", ("url",)), ("trusted", ("url", "network", "persist", "fileread"))),
                                    "§5: home and outside enable the url, network and persist packages; 'reader' is "
                                    "§5's example feature 'read local files' as a policy; javascript and trusted are "
                                    "§6's names, given the packages their names suggest")

    def __post_init__(self):
        super().__post_init__()
        if [name for name, _ in self.policy_features] != list(POLICY_URLS) or not all(
                set(f) <= set(PACKAGES) | {"persist"} for _, f in self.policy_features):
            raise ValueError(f"policy_features must give, for each of {list(POLICY_URLS)}, packages among "
                             f"{sorted(set(PACKAGES) | {'persist'})}; got {self.policy_features!r}")
        for host, ports in self.safe_sockets:
            if not isinstance(host, str) or not all(isinstance(q, int) and 0 < q < 65536 for q in ports):
                raise ValueError(f"safe_sockets must pair host names with ports in 1..65535, got {self.safe_sockets!r}")


CALIBRATION = (
    Fit("cycles_per_instruction", "table1", "alias to lreverse proc", "time_us", (0.2, 50.0)),
)
INPUTS = ()
COUNTERFACTUALS = (
    Counterfactual("no-marshalling", {"marshal_instructions": 0.0},
                   "words cross between interpreters for free"),
    Counterfactual("ordinary-interpreter", {"safe_interpreter": False},
                   "the applet runs in an ordinary interpreter: no command is hidden"),
    Counterfactual("unchecked-aliases", {"aliases_check": False},
                   "alias targets forward every call without checking its arguments"),
    Counterfactual("policies-compose", {"one_policy_per_applet": False},
                   "an applet may obtain a second policy after its first"),
    Counterfactual("no-trust-map", {"trust_map_enforced": False}, "every applet may use every policy"),
)


# --- Table 1: calls as recipes ---------------------------------------------------------

def ops(**counts) -> Recipe:
    """A recipe of fixed-cost operations: ``ops(call=1, frame=1)``."""
    return Recipe(ops=counts)


#: The lreverse procedure's work in parts: (prologue, loop test, loop body, epilogue), as operations.
#: Tcl 8.6 (compiled list commands; its disassembly): ``set r {}`` 3, ``set i [llength $l]`` 4, a jump
#: into the test; the test 4 (load, push, gt, jumpTrue); the body ``incr`` 2 and ``lappend r [lindex
#: $l $i]`` 5; three nops, the load and done. Tcl 8.0 (the test on top, a jump back at the bottom):
#: llength, lindex and lappend are pushed by name and invoked, a dispatch and a list command each.
LREVERSE_PARTS = {
    True: ({"bytecode": 8}, {"bytecode": 4}, {"bytecode": 7}, {"bytecode": 5}),
    False: ({"bytecode": 7, "call": 1, "list_command": 1}, {"bytecode": 4},
            {"bytecode": 9, "call": 2, "list_command": 2}, {"bytecode": 2}),
}


def lreverse_recipe(n: int, compiled_list_commands: bool) -> Recipe:
    """The lreverse procedure's body on an n-element list (:data:`BENCHMARK_PROCS`): the loop test runs
    n+1 times, the body n times."""
    prologue, test, body, epilogue = (ops(**part) for part in LREVERSE_PARTS[compiled_list_commands])
    return prologue + test * (n + 1) + body * n + epilogue


def direct_recipe(benchmark: str, p: Params) -> Recipe:
    """One direct call of a benchmark, from compiled code in the interpreter that defines it."""
    if benchmark == "pid":  # a C command: the dispatch, the system call, its integer result (about a bytecode)
        return ops(call=1, trap=1, bytecode=1)
    k = p.proc_args if benchmark in ("10arg proc", "10add proc") else ARGS[benchmark]
    call = ops(call=1, frame=1, arg=k)
    if benchmark == "10add proc":  # expr {$a+...+$j}: k loads, k-1 adds, the result
        return call + ops(bytecode=2 * k)
    if benchmark == "lreverse proc":
        return call + lreverse_recipe(p.list_length, p.compiled_list_commands)
    return call


def marshalled_words(benchmark: str, p: Params) -> int:
    """Words an alias call moves between the interpreters: the result, and with copying the target's
    name and every argument."""
    k = p.proc_args if benchmark in ("10arg proc", "10add proc") else ARGS[benchmark]
    return 1 + (k + 1 if p.copies_arguments else 0)


def alias_extra(benchmark: str, p: Params) -> Recipe:
    """What an alias adds to a call: the forwarding, Tcl 8.0's lookup of the target by name, and the
    words marshalled."""
    extra = ops(proxy=1, marshal=marshalled_words(benchmark, p))
    return extra + ops(lookup=1) if p.target_by_name else extra


def alias_recipe(benchmark: str, p: Params) -> Recipe:
    """The same call made through an alias from another interpreter."""
    return direct_recipe(benchmark, p) + alias_extra(benchmark, p)


def cost_model(p: Params) -> CpuCostModel:
    """Seconds per operation on the Pentium 233: instruction counts at the cycles per instruction."""
    per_instruction = p.cycles_per_instruction / p.clock_hz
    counts = {"call": p.call_instructions, "frame": p.frame_instructions, "arg": p.arg_instructions,
              "bytecode": p.bytecode_instructions, "list_command": p.list_command_instructions,
              "proxy": p.proxy_instructions, "lookup": p.lookup_instructions, "marshal": p.marshal_instructions}
    fixed = {op: n * per_instruction for op, n in counts.items()}
    fixed["trap"] = p.trap_cycles / p.clock_hz
    return CpuCostModel(p.clock_hz, fixed)


def recipes(p: Params) -> dict:
    """Every row of Table 1 as a recipe."""
    out = {}
    for b in BENCHMARKS:
        out[b] = direct_recipe(b, p)
        out[ALIAS + b] = alias_recipe(b, p)
    return out


def table1(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 1: microseconds per call on the Pentium 233 with Tcl 8.0, directly and through an alias.

    Index: the paper's rows. Columns: time_us; ratio_to_direct (the row over the same benchmark called
    directly); ratio_to_null_proc (the row over the null procedure called directly); overhead_us (what
    the alias adds).
    """
    p = params or Params()
    cpu = cost_model(p)
    t = {row: r.seconds(cpu) / us for row, r in recipes(p).items()}
    direct = {row: t[row.removeprefix(ALIAS)] for row in ROWS}
    df = pd.DataFrame({"time_us": t}).reindex(list(ROWS))
    df["ratio_to_direct"] = [t[r] / direct[r] for r in df.index]
    df["ratio_to_null_proc"] = df["time_us"] / t["null proc"]
    df["overhead_us"] = [alias_extra(r.removeprefix(ALIAS), p).seconds(cpu) / us if r.startswith(ALIAS) else 0.0
                         for r in df.index]
    return df.rename_axis("command")


def breakdown_us(params: Params | None = None) -> pd.DataFrame:
    """Microseconds of each operation in each row of Table 1 (rows: the table's; columns: operations)."""
    p = params or Params()
    cpu = cost_model(p)
    rows = {row: {op: s / us for op, s in r.breakdown(cpu).items()} for row, r in recipes(p).items()}
    return pd.DataFrame(rows).T.reindex(index=list(ROWS), columns=list(OPERATIONS)).fillna(0.0).rename_axis("command")


#: The operations a call counts, in the order a breakdown lists them.
OPERATIONS = ("call", "frame", "arg", "bytecode", "list_command", "trap", "proxy", "lookup", "marshal")


# --- §4-§6, §8: the mechanism of Safe-Tcl, as decisions --------------------------------------------

#: The safe base's hidden commands that the scenarios use (§4: file system, subprocesses, sockets).
HIDDEN = ("open", "exec", "socket", "file", "source", "load", "exit", "cd", "glob", "pwd", "fconfigure")
#: §5's policies' urls sections: the URL patterns each allows ('$originHomeDirURL' is the applet's home).
POLICY_URLS = {"home": ("$originHomeDirURL*",), "outside": ("http://www.cnet.com/*",), "reader": (),
               "javascript": ("$originHomeDirURL*",), "trusted": ("*",)}
#: §6's trust map: policies section (the paper's three statements, and 'allow reader' for §5's example),
#: and the URLs the javascript authenticator accepts (the paper does not list them).
TRUST_MAP = (("disallow", "trusted", None), ("allow", "home", None), ("allow", "reader", None),
             ("allow", "javascript", "javascriptTrustedURLs"), ("allow", "outside", None))
JAVASCRIPT_TRUSTED_URLS = ("http://trusted.example.com/*",)
ORIGIN = "http://www.example.org/applets/"
OUTSIDE_HOST = "www.cnet.com"   # a host outside the firewall that the outside policy's network reaches


@dataclass(frozen=True)
class Scenario:
    """One applet's steps in a fresh safe interpreter; the outcome is the last step's."""

    id: str
    section: str
    steps: tuple
    origin: str = ORIGIN
    setup: str = "plugin"   # "figure2": Figure 2's socket alias installed; "plugin": the policy alias


SCENARIOS = (
    Scenario("socket sage.eng 1024", "Figure 2", (("socket", "sage.eng", 1024),), setup="figure2"),
    Scenario("socket bisque.eng 4000", "Figure 2", (("socket", "bisque.eng", 4000),), setup="figure2"),
    Scenario("socket www.sun.com 8015", "Figure 2", (("socket", "www.sun.com", 8015),), setup="figure2"),
    Scenario("socket bisque.eng 80", "Figure 2", (("socket", "bisque.eng", 80),), setup="figure2"),
    Scenario("socket an unknown host", "Figure 2", (("socket", "evil.example.com", 80),), setup="figure2"),
    Scenario("open a local file", "§4", (("command", "open", "/etc/passwd"),)),
    Scenario("exec a program", "§4", (("command", "exec", "ls"),)),
    Scenario("invoke the hidden socket itself", "§4", (("invokehidden", "socket", "sage.eng", 1024),)),
    Scenario("policy trusted", "§6", (("policy", "trusted"),)),
    Scenario("policy home", "§6", (("policy", "home"),)),
    Scenario("policy javascript, trusted origin", "§6", (("policy", "javascript"),),
             origin="http://trusted.example.com/app/"),
    Scenario("policy javascript, other origin", "§6", (("policy", "javascript"),)),
    Scenario("home: fetch from the applet's home", "§5", (("policy", "home"), ("geturl", ORIGIN + "data.html"))),
    Scenario("home: fetch from www.cnet.com", "§5", (("policy", "home"), ("geturl", "http://www.cnet.com/news"))),
    Scenario("outside: fetch from www.cnet.com", "§5",
             (("policy", "outside"), ("geturl", "http://www.cnet.com/news"))),
    Scenario("outside: fetch from the applet's home", "§5",
             (("policy", "outside"), ("geturl", ORIGIN + "data.html"))),
    Scenario("fetch without a policy", "§5", (("geturl", ORIGIN + "data.html"),)),
    Scenario("second policy after home", "§5", (("policy", "home"), ("policy", "outside"))),
    Scenario("reader: read a local file", "§5", (("policy", "reader"), ("readfile",))),
    Scenario("reader, then send the file outside", "§5",
             (("policy", "reader"), ("readfile",), ("policy", "outside"), ("send", OUTSIDE_HOST))),
    Scenario("outside alone: send a local file", "§5", (("policy", "outside"), ("readfile",))),
    Scenario("output within the byte limit", "§8", (("puts", 400), ("puts", 400))),
    Scenario("output past the byte limit", "§8", (("puts", 400), ("puts", 400), ("puts", 400))),
)


class Refused(Exception):
    """A step the mechanism refuses, with the message the applet sees."""


class SafeTclHost:
    """A master interpreter hosting one applet in a safe interpreter (§4-§6, §8).

    The applet's commands are the safe base and the aliases the master installed: a hidden command
    is invisible to it, an alias runs its target in the master, which checks the arguments against
    the applet's policy before acting. The switches of :class:`Params` turn the mechanisms off one by
    one; without a safe interpreter the applet runs every command with the user's privileges.
    """

    def __init__(self, p: Params, scenario: Scenario):
        self.p, self.origin = p, scenario.origin
        self.granted: list = []          # the policies the applet obtained, in order
        self.features: set = set()
        self.urls: tuple = ()
        self.holding_file = False        # the applet holds a local file's contents
        self.written = 0
        self.aliases = {"policy", "puts"} | ({"socket"} if scenario.setup == "figure2" else set())

    def run(self, step: tuple) -> str:
        """Run one step of the applet; Refused if the mechanism stops it."""
        kind, *args = step
        if kind == "command":
            return self.command(*args)
        if kind == "invokehidden":  # only a master may invoke a hidden command (§4)
            if self.p.safe_interpreter:
                raise Refused("not allowed to invoke hidden commands from safe interpreter")
            return self.command(*args)
        if kind in self.aliases or kind in self.package_aliases():
            return getattr(self, "alias_" + kind)(*args)
        if not self.p.safe_interpreter:
            return self.unrestricted(kind)
        raise Refused(f'invalid command name "{kind}"')

    def command(self, name: str, *args) -> str:
        if name in HIDDEN and self.p.safe_interpreter:
            raise Refused(f'invalid command name "{name}"')
        return f"{name} ran"

    def unrestricted(self, kind: str) -> str:
        """A step run with the user's privileges (no safe interpreter): files and sockets at will."""
        if kind == "readfile":
            self.holding_file = True
        return LEAKED if kind == "send" and self.holding_file else f"{kind} ran unrestricted"

    def package_aliases(self) -> set:
        """The aliases the packages of the applet's policies installed (§5)."""
        return {alias for feature, alias in PACKAGES.items() if feature in self.features}

    # -- the aliases' targets in the master --------------------------------------------------
    def alias_socket(self, host: str, port: int) -> str:
        """Figure 2's AliasSocket."""
        table = dict(self.p.safe_sockets)
        if self.p.aliases_check:
            if host not in table:
                raise Refused(f"Unknown host: {host}")
            if port not in table[host]:
                raise Refused(f"Bad port: {port}")
        return f"hidden socket {host} {port}"

    def alias_policy(self, name: str) -> str:
        """The policy alias of the safe base (§5, §6)."""
        if self.granted and self.p.one_policy_per_applet:
            raise Refused(f"applet already has policy {self.granted[0]}")
        if self.p.trust_map_enforced and not trust_map_allows(name, self.origin):
            raise Refused(f"policy {name} not allowed")
        self.granted.append(name)
        self.features |= set(dict(self.p.policy_features)[name])
        self.urls += tuple(u.replace("$originHomeDirURL", self.origin) for u in POLICY_URLS[name])
        return name

    def alias_geturl(self, url: str) -> str:
        if self.p.aliases_check and not any(string_match(pat, url) for pat in self.urls):
            raise Refused(f"url {url} not allowed")
        return f"allowed {url}"

    def alias_readfile(self) -> str:
        self.holding_file = True
        return "read a local file"

    def alias_send(self, host: str) -> str:
        """The network package: only the outside policy reaches a host outside the firewall."""
        if self.p.aliases_check and not (host == OUTSIDE_HOST and "outside" in self.granted):
            raise Refused(f"host {host} not allowed")
        return LEAKED if self.holding_file else "sent"

    def alias_puts(self, nbytes: int) -> str:
        """§8: an alias in place of puts counts the bytes written and enforces a limit."""
        if self.p.aliases_check and self.written + nbytes > self.p.output_limit_bytes:
            raise Refused(f"output limit of {self.p.output_limit_bytes} bytes reached")
        self.written += nbytes
        return f"wrote {nbytes} bytes"


LEAKED = "sent a local file outside"
#: The alias each security package installs (§5: url, network, persist; fileread for §5's example).
PACKAGES = {"url": "geturl", "fileread": "readfile", "network": "send"}


def string_match(pattern: str, s: str) -> bool:
    """Tcl's ``string match`` for the patterns policies use: ``*`` any run, ``?`` any one character."""
    p_i = s_i = 0
    star, mark = -1, 0
    while s_i < len(s):
        if p_i < len(pattern) and pattern[p_i] in ("?", s[s_i]):
            p_i, s_i = p_i + 1, s_i + 1
        elif p_i < len(pattern) and pattern[p_i] == "*":
            star, mark, p_i = p_i, s_i, p_i + 1
        elif star >= 0:
            p_i, mark = star + 1, mark + 1
            s_i = mark
        else:
            return False
    return all(c == "*" for c in pattern[p_i:])


def trust_map_allows(policy: str, origin: str) -> bool:
    """§6: the first statement of the trust map's policies section that names the policy decides; an
    ``ifallowed`` authenticator allows it only if the applet's URL matches that section."""
    for verdict, name, section in TRUST_MAP:
        if name != policy:
            continue
        if verdict == "disallow":
            return False
        return section is None or any(string_match(pat, origin) for pat in JAVASCRIPT_TRUSTED_URLS)
    return False


def run_scenario(p: Params, scenario: Scenario) -> tuple:
    """(allowed, message) of the scenario's last step; a refused earlier step ends it, refused."""
    host = SafeTclHost(p, scenario)
    message = ""
    for step in scenario.steps:
        try:
            message = host.run(step)
        except Refused as e:
            return False, str(e)
    return True, message


def policies(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§4-§6 and §8's examples as decisions: one row per scenario (:data:`SCENARIOS`).

    Columns: section; allowed (1 if the applet's last step ran, 0 if the mechanism refused it);
    leaked (1 if a local file's contents reached a host outside the firewall); message.
    """
    p = params or Params()
    rows = []
    for s in SCENARIOS:
        ok, message = run_scenario(p, s)
        rows.append({"scenario": s.id, "section": s.section, "allowed": int(ok),
                     "leaked": int(ok and message == LEAKED), "message": message})
    return pd.DataFrame(rows).set_index("scenario")


def counterfactual_decisions(params: Params | None = None) -> pd.DataFrame:
    """Which scenarios change their decision under each counterfactual: allowed (1) or refused (0),
    one column per counterfactual, only the rows that differ from the mechanism as the paper has it."""
    p = params or Params()
    base = policies(p)["allowed"]
    cols = {cf.name: policies(cf.apply(p))["allowed"] for cf in COUNTERFACTUALS if cf.name != "no-marshalling"}
    df = pd.DataFrame({"as in the paper": base, **cols})
    return df[(df.drop(columns="as in the paper").ne(base, axis=0)).any(axis=1)]


def setup_table(params: Params | None = None) -> pd.DataFrame:
    """The machine and software of §9.1, and the benchmarks, with their sources."""
    p = params or Params()
    rows = [("machine", f"Pentium, {p.clock_hz / MHz:.0f} MHz, Linux", "§9.1"),
            ("Tcl", "8.0 (bytecode compiler; list commands not compiled)", "§9.1: 'in Tcl 8.0'"),
            ("benchmarks", ("pid; a null procedure; ten arguments; adding ten arguments; reversing a "
                            f"{p.list_length}-element list"), "§9.1"),
            ("each called", "directly, and through an alias from another interpreter", "§9.1"),
            ("timing", "not stated; Tcl's time command reports microseconds per iteration", "assumed")]
    return pd.DataFrame(rows, columns=["item", "value", "source"]).set_index("item")


# --- then vs now: the real experiments, in Tcl 8.6 on this machine ----------------------------

def timing_settings(quick: bool = False) -> dict:
    """Iterations per ``time`` run and repeats: short runs, many of them, so some escape interruption."""
    return {"iterations": 1000, "repeats": 16} if quick else {"iterations": 2000, "repeats": 41}


def timing_script(*, iterations: int = 2000, repeats: int = 41) -> str:
    """A Tcl script that times Table 1 with ``time`` in a real safe interpreter.

    The applet's interpreter is created with ``interp create -safe``; the procedures are defined in it,
    in the master and in an ordinary (trusted) child interpreter; each alias (``interp alias``) runs the
    master's procedure. Each repeat times every row (and an empty script, the loop's own cost) in the
    safe interpreter, and the direct rows in the trusted child too, the control for what safety costs.
    Prints tab-separated ``TIME row where repeat microseconds-per-call`` lines.
    """
    if iterations < 1 or repeats < 1:
        raise ValueError(f"iterations and repeats must be >= 1, got {iterations!r}, {repeats!r}")
    lines = [BENCHMARK_PROCS, "set safe [interp create -safe]", "set trusted [interp create]",
             f"set L [list {' '.join(str(i) for i in range(1, 11))}]"]
    lines += [f"interp eval ${i} $procs_src; interp eval ${i} [list set L $L]" for i in ("safe", "trusted")]
    for _, alias_call, target in CALLS.values():
        lines.append(f"interp alias $safe {alias_call.split()[0]} {{}} {target}")
    table = ["empty {}"]
    for b, (direct, alias_call, _) in CALLS.items():
        table.append(f"{{{b}}} {{{direct}}}")
        table.append(f"{{{ALIAS + b}}} {{{alias_call}}}")
    lines.append("set rows {" + " ".join(table) + "}")
    lines.append(f"""for {{set rep 0}} {{$rep < {repeats}}} {{incr rep}} {{
    foreach {{row script}} $rows {{
        set t [lindex [interp eval $safe [list time $script {iterations}]] 0]
        puts [join [list TIME $row safe $rep $t] \\t]
        if {{![string match "alias*" $row]}} {{
            set t [lindex [interp eval $trusted [list time $script {iterations}]] 0]
            puts [join [list TIME $row trusted $rep $t] \\t]
        }}
    }}
}}""")
    return "set procs_src {" + BENCHMARK_PROCS + "}\n" + "\n".join(lines) + "\n"


def parse_timings(text: str) -> pd.DataFrame:
    """The ``TIME`` lines of :func:`timing_script`'s output: one row per (row, where, repeat), in us."""
    rows = []
    for line in text.splitlines():
        if line.startswith("TIME\t"):
            _, row, where, rep, t = line.split("\t")
            rows.append({"row": row, "where": where, "repeat": int(rep), "time_us": float(t)})
    if not rows:
        raise ValueError("no TIME lines in the Tcl output")
    return pd.DataFrame(rows)


def net_us(timings: pd.DataFrame, where: str = "safe") -> pd.Series:
    """Microseconds per call of each row, less the empty script's (the ``time`` loop itself).

    Each row's fastest repeat: on a shared machine a repeat can only be slowed (by another process
    taking the CPU or its caches), never sped up, so the minimum is the cost of the code itself.
    """
    t = timings[timings["where"] == where].groupby("row")["time_us"].min()
    return t.drop("empty") - t["empty"]


def then_and_now(timings: pd.DataFrame, params: Params | None = None) -> pd.DataFrame:
    """Table 1 in 1998 (the model on the Pentium 233) beside the rows timed on this machine.

    Columns: 1998_model_us, now_us (in the safe interpreter, the ``time`` loop's own cost taken off:
    :func:`net_us`), speedup (1998 over now), now_ratio_to_direct, now_ratio_to_null_proc,
    1998_model_ratio_to_null_proc.
    """
    then = table1(params)
    now = net_us(timings, "safe").reindex(list(ROWS))
    direct = pd.Series({r: now[r.removeprefix(ALIAS)] for r in ROWS})
    return pd.DataFrame({
        "1998_model_us": then["time_us"], "now_us": now, "speedup": then["time_us"] / now,
        "now_ratio_to_direct": now / direct, "now_ratio_to_null_proc": now / now["null proc"],
        "1998_model_ratio_to_null_proc": then["ratio_to_null_proc"]}).rename_axis("command")


def noise_of(timings: pd.DataFrame, statistic, *, groups: int = 4) -> float:
    """How far a statistic of the timings moves between subsets of the repeats: its standard deviation
    over ``groups`` interleaved subsets (repeat number modulo ``groups``). Each subset has fewer
    repeats than the whole, so this overstates the noise of the statistic on all of them."""
    if timings["repeat"].nunique() < 2 * groups:
        raise ValueError(f"the noise needs at least {2 * groups} repeats, got {timings['repeat'].nunique()}")
    values = [statistic(timings[timings["repeat"] % groups == g]) for g in range(groups)]
    return float(pd.Series(values).std())


#: How Tcl 8.6's AliasObjCmd crosses (tclInterp.c): it copies every word of the command (the target's
#: name and the arguments, a reference count each) into a new vector, resolves the target through that
#: vector's name object, and moves the result with Tcl_TransferResult.
TCL86 = {"target_by_name": False, "copies_arguments": True}


@one_core()
def measured_overheads(timings: pd.DataFrame) -> dict:
    """What the alias adds to each benchmark on this machine: the alias row less the direct row (us)."""
    now = net_us(timings)
    return {b: now[ALIAS + b] - now[b] for b in BENCHMARKS}


def alias_fit(timings: pd.DataFrame) -> pd.DataFrame:
    """The alias's cost today as a recipe: forwarding plus a marshal per word (Tcl 8.6's crossing).

    The per-word cost comes from the alias to the 10-argument procedure against the null alias (ten
    words more), the forwarding from the null alias, as a named residual (:func:`pysim.sw.fit_residual`).
    Each row: the measured overhead (:func:`measured_overheads`), its noise (:func:`noise_of`), the
    recipe's overhead (a prediction for pid, 10add and lreverse), and whether the two agree within twice
    the noise. ``attrs`` holds the fitted proxy_us and marshal_us.
    """
    p = dataclasses.replace(Params(), **TCL86)
    overhead = measured_overheads(timings)
    words = {b: marshalled_words(b, p) for b in BENCHMARKS}
    per_word = (overhead["10arg proc"] - overhead["null proc"]) / (words["10arg proc"] - words["null proc"])
    cpu = CpuCostModel(1.0, {"marshal": max(per_word, 0.0) * us})
    _, cpu = fit_residual(ops(marshal=words["null proc"]), cpu, overhead["null proc"] * us, "proxy")
    rows = []
    for b in BENCHMARKS:
        noise = noise_of(timings, lambda t, b=b: measured_overheads(t)[b])
        recipe_us = ops(proxy=1, marshal=words[b]).seconds(cpu) / us
        rows.append({"benchmark": b, "words": words[b], "measured_overhead_us": overhead[b], "noise_us": noise,
                     "recipe_overhead_us": recipe_us, "rel_error": recipe_us / overhead[b] - 1,
                     "within_noise": abs(recipe_us - overhead[b]) <= 2 * noise,
                     "role": "fit" if b in ("null proc", "10arg proc") else "prediction"})
    out = pd.DataFrame(rows).set_index("benchmark")
    out.attrs.update(proxy_us=cpu.fixed_s["proxy"] / us, marshal_us=cpu.fixed_s["marshal"] / us)
    return out


def _alias_to_null_ratio(t):
    now = net_us(t)
    return now["alias to null proc"] / now["null proc"]


def _marshalling_share(t):
    now = net_us(t)
    diff = now["alias to pid"] - now["alias to null proc"]
    return (diff - (now["pid"] - now["null proc"])) / diff


def _largest_safe_gap(t):
    safe, trusted = net_us(t), net_us(t, "trusted")
    return max(safe[b] - trusted[b] for b in BENCHMARKS)


def statements_now(timings: pd.DataFrame) -> pd.DataFrame:
    """§9.1's and §10.2's statements about cost, checked on this machine's measurements (with noise).

    * 'about twice': the alias to the null procedure over the null procedure, between 1.5 and 2.5
      ('about twice', one significant figure);
    * 'the difference between calling a null alias and an alias to pid ... shows the cost of
      marshalling': the share of that difference which pid's and the null procedure's own costs leave
      unexplained; the statement holds if that is most of it (over half);
    * 'the policies only add overhead to untrusted code that must use aliases': how much slower a
      direct row runs in the safe interpreter than in an ordinary child interpreter, at most (the
      largest difference); the statement holds if that is no more than twice its noise.
    """
    ratio, share, gap = _alias_to_null_ratio(timings), _marshalling_share(timings), _largest_safe_gap(timings)
    noise = {f: noise_of(timings, f) for f in (_alias_to_null_ratio, _marshalling_share, _largest_safe_gap)}
    rows = [
        {"statement": "§9.1: an alias costs about twice a null procedure call", "measured": ratio,
         "noise": noise[_alias_to_null_ratio], "unit": "times", "holds": 1.5 <= ratio <= 2.5},
        {"statement": "§9.1: the null alias against the alias to pid shows the cost of marshalling",
         "measured": share, "noise": noise[_marshalling_share], "unit": "share of the difference",
         "holds": share > 0.5},
        {"statement": "§10.2: policies add overhead only to code that uses aliases", "measured": gap,
         "noise": noise[_largest_safe_gap], "unit": "us, safe less ordinary child (largest)",
         "holds": gap <= 2 * noise[_largest_safe_gap]},
    ]
    return pd.DataFrame(rows).set_index("statement")


# --- then vs now: the policies in a real safe interpreter -------------------------------------------

def _tcl_word(x) -> str:
    s = str(x)
    return "{" + s + "}" if (not s or any(c in s for c in " $[]\\\"{};")) else s


def policy_script(params: Params | None = None, *, secret_file: str, compose: bool = False) -> str:
    """A Tcl script that runs every scenario of :data:`SCENARIOS` in a real safe interpreter.

    The master holds Figure 2's AliasSocket (as printed), §5's policies in the plug-in's language
    (``section`` / ``allow``), §6's trust map with its ``ifallowed`` authenticator, and aliases for
    the packages. Figure 2's hosts are not contacted: each Figure 2 applet's hidden ``socket`` is
    replaced by a recorder (hidden in its place), so an allowed call is seen reaching it. 'outside'
    sends to a loopback server the script starts, standing for a host outside the firewall; the file
    read is ``secret_file``. ``compose=True`` lifts the one-policy rule. Prints ``RESULT <scenario>
    <1 allowed | 0 refused> <message>``, and ``LEAK <bytes the server received>``.
    """
    p = params or Params()
    sockets = " ".join(f"{h} {_tcl_word(' '.join(map(str, ports)))}" for h, ports in p.safe_sockets)
    pol = "\n".join(f"set policyText({name}) {{section features\n"
                     + "".join(f"allow {f}\n" for f in features) + "section urls\n"
                     + "".join(f"allow {u}\n" for u in POLICY_URLS[name]) + "}" for name, features in p.policy_features)
    trust = "section policies\n" + "".join(
        f"{v} {n}" + (f" ifallowed {s} $originURL" if s else "") + "\n" for v, n, s in TRUST_MAP)
    trust += "section javascriptTrustedURLs\n" + "".join(f"allow {u}\n" for u in JAVASCRIPT_TRUSTED_URLS)
    scenarios = "\n".join(
        "    " + " ".join(_tcl_word(x) for x in (s.id, s.setup, s.origin))
        + " " + _tcl_word(" ".join(_tcl_word(" ".join(_tcl_word(a) for a in step)) for step in s.steps))
        for s in SCENARIOS)
    return _POLICY_TCL.format(sockets=sockets, policies=pol, trust=trust, scenarios=scenarios,
                              secret=_tcl_word(secret_file), outside=OUTSIDE_HOST,
                              one_policy=0 if compose else 1, limit=p.output_limit_bytes)


_POLICY_TCL = r"""
# --- Figure 2, as printed -----------------------------------------------------
array set safeSockets {{{sockets}}}
proc AliasSocket {{safe host port}} {{
    global safeSockets
    if {{![info exists safeSockets($host)]}} {{
        error "Unknown host: $host"
    }}
    if {{[lsearch -exact $safeSockets($host) $port] < 0}} {{
        error "Bad port: $port"
    }}
    return [interp invokehidden $safe socket $host $port]
}}
# --- §5's policies and §6's trust map, in the plug-in's configuration language ---
{policies}
set trustMap {{{trust}}}
# Read a configuration script in a safe interpreter of its own: section/allow/disallow record statements.
proc readConfig {{text vars}} {{
    set c [interp create -safe]
    foreach {{k v}} $vars {{ interp eval $c [list set $k $v] }}
    set ::cfg {{}}
    set ::cfgSection {{}}
    interp alias $c section {{}} cfgSection
    interp alias $c allow {{}} cfgStatement allow
    interp alias $c disallow {{}} cfgStatement disallow
    interp eval $c $text
    interp delete $c
    return $::cfg
}}
proc cfgSection {{name}} {{ set ::cfgSection $name }}
proc cfgStatement {{verdict args}} {{ lappend ::cfg [list $::cfgSection $verdict $args] }}
proc trustAllows {{policy origin}} {{
    set map [readConfig $::trustMap [list originURL $origin]]
    foreach st $map {{
        lassign $st section verdict words
        if {{$section ne "policies" || [lindex $words 0] ne $policy}} continue
        if {{$verdict eq "disallow"}} {{ return 0 }}
        if {{[lindex $words 1] ne "ifallowed"}} {{ return 1 }}
        lassign [lrange $words 2 3] authSection url
        foreach st2 $map {{
            lassign $st2 s2 v2 w2
            if {{$s2 eq $authSection && $v2 eq "allow" && [string match [lindex $w2 0] $url]}} {{ return 1 }}
        }}
        return 0
    }}
    return 0
}}
# --- the policy alias and the packages' aliases ------------------------------------
set onePolicy {one_policy}
proc AliasPolicy {{safe name}} {{
    upvar #0 applet_$safe a
    if {{$a(policy) ne "" && $::onePolicy}} {{ error "applet already has policy $a(policy)" }}
    if {{![trustAllows $name $a(origin)]}} {{ error "policy $name not allowed" }}
    set a(policy) $name
    foreach st [readConfig $::policyText($name) [list originHomeDirURL $a(origin)]] {{
        lassign $st section verdict words
        if {{$section eq "features"}} {{ InstallPackage $safe [lindex $words 0] }}
        if {{$section eq "urls"}} {{ lappend a(urls) [lindex $words 0] }}
    }}
    lappend a(granted) $name
    return $name
}}
proc InstallPackage {{safe feature}} {{
    switch -- $feature {{
        url {{ interp alias $safe geturl {{}} AliasGeturl $safe }}
        fileread {{ interp alias $safe readfile {{}} AliasReadfile $safe }}
        network {{ interp alias $safe send {{}} AliasSend $safe }}
    }}
}}
proc AliasGeturl {{safe url}} {{
    upvar #0 applet_$safe a
    foreach pat $a(urls) {{ if {{[string match $pat $url]}} {{ return "allowed $url" }} }}
    error "url $url not allowed"
}}
proc AliasReadfile {{safe}} {{
    set f [open {secret}]
    set data [read $f]
    close $f
    return $data
}}
proc AliasSend {{safe host data}} {{
    upvar #0 applet_$safe a
    if {{$host ne "{outside}" || "outside" ni $a(granted)}} {{ error "host $host not allowed" }}
    set c [socket 127.0.0.1 $::serverPort]
    puts -nonewline $c $data
    close $c
    return "sent [string length $data] bytes"
}}
proc AliasPuts {{safe data}} {{
    upvar #0 applet_$safe a
    if {{$a(written) + [string length $data] > {limit}}} {{ error "output limit of {limit} bytes reached" }}
    incr a(written) [string length $data]
    return "wrote [string length $data] bytes"
}}
# --- a loopback server standing for a host outside the firewall -------------------
set ::received {{}}
proc Accept {{c h p}} {{ fconfigure $c -blocking 0; fileevent $c readable [list Drain $c] }}
proc Drain {{c}} {{ append ::received [read $c]; if {{[eof $c]}} {{ close $c; set ::drained 1 }} }}
set server [socket -server Accept -myaddr 127.0.0.1 0]
set serverPort [lindex [fconfigure $server -sockname] 2]
# --- each scenario in a fresh safe interpreter --------------------------------------
proc Recorder {{host port}} {{ return "recorder reached: socket $host $port" }}
proc NewApplet {{setup origin}} {{
    set s [interp create -safe]
    upvar #0 applet_$s a
    array set a [list policy {{}} origin $origin urls {{}} granted {{}} written 0]
    interp eval $s {{set data {{}}}}
    interp alias $s policy {{}} AliasPolicy $s
    interp alias $s puts {{}} AliasPuts $s
    if {{$setup eq "figure2"}} {{
        interp expose $s socket
        interp eval $s {{rename socket {{}}}}
        interp eval $s [list proc recorder {{host port}} [info body Recorder]]
        interp hide $s recorder socket
        interp alias $s socket {{}} AliasSocket $s
    }}
    return $s
}}
proc Step {{s step}} {{
    set args [lassign $step kind]
    switch -- $kind {{
        command {{ return [interp eval $s $args] }}
        invokehidden {{ return [interp eval $s [list interp invokehidden {{}} {{*}}$args]] }}
        puts {{ return [interp eval $s [list puts [string repeat x [lindex $args 0]]]] }}
        readfile {{ interp eval $s {{set data [readfile]}}; return "read a local file" }}
        send {{ return [interp eval $s "send [list [lindex $args 0]] \$data"] }}
        default {{ return [interp eval $s [list $kind {{*}}$args]] }}
    }}
}}
foreach {{id setup origin steps}} {{
{scenarios}
}} {{
    set s [NewApplet $setup $origin]
    set ok 1
    set msg {{}}
    foreach step $steps {{
        if {{[catch {{Step $s $step}} msg]}} {{ set ok 0; break }}
    }}
    puts [join [list RESULT $id $ok $msg] \t]
    interp delete $s
}}
# --- what reached the outside server ---------------------------------------------
after 500 {{set ::drained 0}}
vwait ::drained
puts [join [list LEAK [string length $::received]] \t]
# --- §4: a channel belongs to the interpreter where socket ran ---------------------
set s [interp create -safe]
set c [interp invokehidden $s socket 127.0.0.1 $serverPort]
set ok [expr {{![catch {{interp eval $s [list puts $c hi]}} m]}}]
puts [join [list CHANNEL "the hidden socket, invoked by the master" $ok $m] \t]
interp eval $s [list close $c]
set c [socket 127.0.0.1 $serverPort]
set ok [expr {{![catch {{interp eval $s [list puts $c hi]}} m]}}]
puts [join [list CHANNEL "socket, run in the master" $ok $m] \t]
close $c
interp delete $s
"""


def parse_policy_results(text: str) -> tuple:
    """(decisions, channels, leaked bytes) from :func:`policy_script`'s output. Decisions: indexed by
    scenario, columns allowed (1/0) and message; channels: whether the applet can use a socket opened
    through the hidden command and one the master opened; leaked: bytes the outside server received."""
    rows, channels, leaked = [], [], None
    for line in text.splitlines():
        kind, *words = line.split("\t")
        if kind == "RESULT":
            rows.append({"scenario": words[0], "allowed": int(words[1]), "message": words[2]})
        elif kind == "CHANNEL":
            channels.append({"opened by": words[0], "usable by the applet": int(words[1]), "message": words[2]})
        elif kind == "LEAK":
            leaked = int(words[0])
    if not rows:
        raise ValueError("no RESULT lines in the Tcl output")
    return (pd.DataFrame(rows).set_index("scenario"), pd.DataFrame(channels).set_index("opened by"), leaked)


#: What the paper says of each scenario: 1 allowed, 0 refused (the sections cited in SCENARIOS).
PAPER_SAYS = {
    "socket sage.eng 1024": 1, "socket bisque.eng 4000": 1, "socket www.sun.com 8015": 1,
    "socket bisque.eng 80": 0, "socket an unknown host": 0, "open a local file": 0, "exec a program": 0,
    "invoke the hidden socket itself": 0, "policy trusted": 0, "policy home": 1,
    "policy javascript, trusted origin": 1, "policy javascript, other origin": 0,
    "home: fetch from the applet's home": 1, "home: fetch from www.cnet.com": 0,
    "outside: fetch from www.cnet.com": 1, "outside: fetch from the applet's home": 0,
    "fetch without a policy": 0, "second policy after home": 0, "reader: read a local file": 1,
    "reader, then send the file outside": 0, "outside alone: send a local file": 0,
    "output within the byte limit": 1, "output past the byte limit": 0,
}


def policies_then_and_now(real: pd.DataFrame | None, params: Params | None = None) -> pd.DataFrame:
    """Each scenario: what the paper says, what the model decides, what real Tcl 8.6 did (or NaN)."""
    model = policies(params)
    out = pd.DataFrame({"section": model["section"], "paper": pd.Series(PAPER_SAYS),
                        "model": model["allowed"]}).reindex(model.index)
    if real is not None:
        out["tcl_8_6"] = real["allowed"].reindex(model.index)
        out["tcl_message"] = real["message"].reindex(model.index)
    return out
