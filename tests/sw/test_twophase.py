"""Two-phase commit: the message and forced-write counts of Mohan, Lindsay and Obermarck's protocols,
nesting, read-only subordinates, and latency from message and force times."""
import pytest

from pysim.sw.twophase import Participant, run


def flat(n, **kinds):
    kids = [Participant(f"s{i}") for i in range(n)]
    for i, kid in enumerate(kids):
        kid.read_only = i < kinds.get("read_only", 0)
        kid.vote_yes = i < n - kinds.get("no", 0)
    return Participant("root", kids)


@pytest.mark.parametrize("n", [1, 3, 8])
def test_commit_costs_per_protocol_for_n_update_subordinates(n):
    basic = run(flat(n), "basic", message_s=1e-3, force_s=1e-2)
    pa = run(flat(n), "presumed_abort", message_s=1e-3, force_s=1e-2)
    pc = run(flat(n), "presumed_commit", message_s=1e-3, force_s=1e-2)
    assert (basic.messages, basic.forced) == (4 * n, 2 * n + 1)
    assert (pa.messages, pa.forced) == (4 * n, 2 * n + 1)
    assert (pc.messages, pc.forced) == (3 * n, n + 2)  # no commit acks; a collecting record instead
    assert {r.outcome for r in (basic, pa, pc)} == {"commit"}


def test_an_abort_under_presumed_abort_is_neither_forced_nor_acknowledged():
    n = 4
    pa = run(flat(n, no=1), "presumed_abort", message_s=1e-3, force_s=1e-2)
    basic = run(flat(n, no=1), "basic", message_s=1e-3, force_s=1e-2)
    assert pa.outcome == basic.outcome == "abort"
    assert (pa.messages, pa.forced) == (2 * n + (n - 1), n - 1)       # prepares, votes, aborts to yes-voters
    assert (basic.messages, basic.forced) == (2 * n + 2 * (n - 1), 1 + 2 * (n - 1))


def test_read_only_subordinates_leave_after_voting_except_under_basic_two_phase_commit():
    tree = flat(4, read_only=3)
    pa = run(tree, "presumed_abort", message_s=1e-3, force_s=1e-2)
    basic = run(tree, "basic", message_s=1e-3, force_s=1e-2)
    assert (pa.messages, pa.forced) == (2 * 4 + 2, 3)  # only the update subordinate hears the outcome
    assert (basic.messages, basic.forced) == (16, 9)


def test_latency_is_two_round_trips_and_two_forces_per_level_for_the_basic_protocol():
    m, f = 1e-3, 1e-2
    one = run(flat(3), "basic", message_s=m, force_s=f)
    assert one.decided_s == pytest.approx(2 * m + f + f)          # prepare, force, vote; force the decision
    assert one.finished_s == pytest.approx(one.decided_s + 2 * m + f)  # decision, force, ack
    nested = Participant("root", [Participant("mid", [Participant("leaf")])])
    two = run(nested, "basic", message_s=m, force_s=f)
    assert two.decided_s == pytest.approx(4 * m + 2 * f + f)
    assert two.forced_by == {"root": 1, "mid": 2, "leaf": 2}


def test_bad_trees_and_protocols_are_refused():
    with pytest.raises(ValueError, match="protocol"):
        run(flat(1), "three_phase", message_s=0, force_s=0)
    with pytest.raises(ValueError, match="unique"):
        run(Participant("x", [Participant("x")]), "basic", message_s=0, force_s=0)
