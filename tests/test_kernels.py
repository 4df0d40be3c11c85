"""The headless kernel client waits in one-second polls, so a missed wake-up costs a second, not a timeout."""
import asyncio
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
