"""Small HTTP helpers for the tests that start servers (JupyterLab, the Docker image)."""
import socket
import urllib.error
import urllib.request


def status(url):
    """The HTTP status of a GET, or None when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return None


def free_port():
    """A loopback port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
