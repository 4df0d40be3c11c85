"""A kernel manager for headless runs whose client never sleeps through a message.

nbclient waits for a cell's reply with one poll of the shell socket lasting the whole cell timeout.
A reply that arrives while the event loop is busy with the kernel's other sockets (widgets make that
likely: their comm messages come in bursts) can be missed by that poll, and the run then stalls until
the timeout, interrupts a kernel that had long finished, and goes on (jupyter/nbclient#312). Here every
wait is cut into one-second polls: a fresh poll finds a message already queued at once, so a missed
wake-up costs at most a second.

Its kernels talk over Unix sockets named for each kernel alone, where the system has them. Over TCP the
manager picks free ports and the kernel binds them a moment later; with several notebooks starting
kernels at once beside real experiments that open loopback servers, another process can take a port in
between, and the kernel dies at start with "Address already in use".
"""
from __future__ import annotations

import os
import tempfile
import time
import uuid
from queue import Empty

from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from jupyter_client.manager import AsyncKernelManager
from traitlets import DottedObjectName, Type, default

#: The longest single poll, seconds.
SLICE_S = 1.0


class SlicedChannel(AsyncZMQSocketChannel):
    """A channel whose ``get_msg`` waits in polls of at most SLICE_S, up to the timeout asked for."""

    async def get_msg(self, timeout: float | None = None):  # type: ignore[override]
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = SLICE_S if deadline is None else min(SLICE_S, max(0.0, deadline - time.monotonic()))
            try:
                return await super().get_msg(timeout=left)
            except Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise


class SlicedClient(AsyncKernelClient):
    shell_channel_class = Type(SlicedChannel)
    iopub_channel_class = Type(SlicedChannel)
    stdin_channel_class = Type(SlicedChannel)
    control_channel_class = Type(SlicedChannel)


class HeadlessKernelManager(AsyncKernelManager):
    """The kernel manager :func:`pysim.reproduce.run_notebook` hands to papermill."""

    client_class = DottedObjectName("pysim.kernels.SlicedClient")
    client_factory = Type(SlicedClient)

    @default("transport")
    def _transport_default(self) -> str:
        return "ipc" if os.name == "posix" else "tcp"

    @default("ip")
    def _ip_default(self) -> str:
        """Over IPC, a path prefix no other kernel uses (its sockets are this plus -1 ... -5)."""
        if self.transport == "ipc":
            return os.path.join(tempfile.gettempdir(), f"pysim-kernel-{uuid.uuid4().hex[:16]}")
        return super()._ip_default()
