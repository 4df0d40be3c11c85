"""The headless kernel client waits in one-second polls, so a missed wake-up costs a second, not a timeout."""
import asyncio
import glob
import os
import time
from queue import Empty

import pytest
from jupyter_client.channels import AsyncZMQSocketChannel

from pysim import kernels


def test_a_long_wait_is_cut_into_short_polls_and_still_times_out(monkeypatch):
    asked = []

    async def never(self, timeout=None):
        asked.append(timeout)
        await asyncio.sleep(timeout)
        raise Empty

    monkeypatch.setattr(AsyncZMQSocketChannel, "get_msg", never)
    monkeypatch.setattr(kernels, "SLICE_S", 0.05)
    channel = kernels.SlicedChannel.__new__(kernels.SlicedChannel)
    t0 = time.monotonic()
    with pytest.raises(Empty):
        asyncio.run(channel.get_msg(timeout=0.3))
    assert 0.3 <= time.monotonic() - t0 < 0.6
    assert len(asked) >= 6 and max(asked) <= 0.05


def test_a_message_found_by_a_later_poll_is_returned(monkeypatch):
    polls = []

    async def third_time(self, timeout=None):  # as if the first polls slept through the message
        polls.append(timeout)
        if len(polls) < 3:
            raise Empty
        return {"msg": "reply"}

    monkeypatch.setattr(AsyncZMQSocketChannel, "get_msg", third_time)
    channel = kernels.SlicedChannel.__new__(kernels.SlicedChannel)
    assert asyncio.run(channel.get_msg(timeout=None)) == {"msg": "reply"} and polls == [kernels.SLICE_S] * 3


def test_the_manager_hands_out_the_sliced_client():
    km = kernels.HeadlessKernelManager(kernel_name="python3")
    client = km.client()
    assert isinstance(client, kernels.SlicedClient)
    assert client.shell_channel_class is kernels.SlicedChannel


@pytest.mark.skipif(os.name != "posix", reason="Unix sockets")
def test_kernels_talk_over_sockets_of_their_own_and_leave_none_behind():
    """No TCP port is picked and bound later (another process may take it meanwhile): each kernel gets
    Unix sockets under a prefix of its own, works through them, and they go when it shuts down."""

    async def run():
        managers = [kernels.HeadlessKernelManager(kernel_name="python3") for _ in range(2)]
        assert all(m.transport == "ipc" for m in managers) and managers[0].ip != managers[1].ip
        for m in managers:
            await m.start_kernel()
        try:
            for m in managers:
                client = m.client()
                client.start_channels()
                await client.wait_for_ready(timeout=60)
                reply = await client.execute_interactive("x = 6 * 7", timeout=60)
                assert reply["content"]["status"] == "ok"
                assert m.get_connection_info()["transport"] == "ipc"
                assert os.path.exists(f"{m.ip}-{m.shell_port}")
                client.stop_channels()
        finally:
            for m in managers:
                await m.shutdown_kernel(now=True)
        return [m.ip for m in managers]

    prefixes = asyncio.run(run())
    assert not [p for ip in prefixes for p in glob.glob(ip + "-*")]
