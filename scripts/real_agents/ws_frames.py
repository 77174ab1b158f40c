"""The server side of a WebSocket (RFC 6455) over a BaseHTTPRequestHandler's socket, standard
library only: the handshake's accept key, reading the client's masked frames (joined when
fragmented; pings answered, a close answered and reported) and writing unmasked ones. Enough
for the scripted upstream to speak Codex's Responses WebSocket transport; no extensions are
accepted, so no frame is compressed.
"""

import base64
import hashlib
import struct

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
OP_CONT, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0, 1, 2, 8, 9, 10
# Most bytes of one message the scripted server takes (a real request is a few hundred KB).
MAX_MESSAGE = 64 << 20


def accept_key(key: str) -> str:
    return base64.b64encode(hashlib.sha1((key.strip() + GUID).encode()).digest()).decode()


def handshake(handler) -> bool:
    """Answers an upgrade request with 101; False (and a 400) when it is not one."""
    key = handler.headers.get("sec-websocket-key")
    if not key or "websocket" not in (handler.headers.get("upgrade") or "").lower():
        handler.send_response(400)
        handler.send_header("content-length", "0")
        handler.end_headers()
        return False
    handler.send_response(101)
    handler.send_header("upgrade", "websocket")
    handler.send_header("connection", "Upgrade")
    handler.send_header("sec-websocket-accept", accept_key(key))
    handler.end_headers()
    handler.wfile.flush()
    handler.close_connection = True
    return True


def _read_exact(rfile, n: int) -> bytes:
    data = rfile.read(n)
    if data is None or len(data) < n:
        raise EOFError("the connection closed")
    return data


def read_frame(rfile):
    b0, b1 = _read_exact(rfile, 2)
    fin, opcode, masked, length = b0 & 0x80, b0 & 0x0F, b1 & 0x80, b1 & 0x7F
    if length == 126:
        (length,) = struct.unpack(">H", _read_exact(rfile, 2))
    elif length == 127:
        (length,) = struct.unpack(">Q", _read_exact(rfile, 8))
    if length > MAX_MESSAGE:
        raise ValueError(f"a frame of {length} bytes")
    mask = _read_exact(rfile, 4) if masked else None
    payload = _read_exact(rfile, length)
    if mask:
        payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return bool(fin), opcode, payload


def write_frame(wfile, opcode: int, payload: bytes):
    head = bytes([0x80 | opcode])
    n = len(payload)
    if n < 126:
        head += bytes([n])
    elif n < 1 << 16:
        head += bytes([126]) + struct.pack(">H", n)
    else:
        head += bytes([127]) + struct.pack(">Q", n)
    wfile.write(head + payload)
    wfile.flush()


def messages(handler, frames_seen=None):
    """Yields (opcode, payload) per whole text or binary message; answers pings; ends after a
    close (answered with the same code). `frames_seen`, when a list, gets each frame's opcode."""
    rfile, wfile = handler.rfile, handler.wfile
    parts, first = [], None
    while True:
        try:
            fin, opcode, payload = read_frame(rfile)
        except (EOFError, OSError, ValueError):
            return
        if frames_seen is not None:
            frames_seen.append(opcode)
        if opcode == OP_PING:
            write_frame(wfile, OP_PONG, payload)
            continue
        if opcode == OP_PONG:
            continue
        if opcode == OP_CLOSE:
            try:
                write_frame(wfile, OP_CLOSE, payload[:2])
            except OSError:
                pass
            return
        if opcode != OP_CONT:
            first, parts = opcode, []
        parts.append(payload)
        if fin:
            yield first, b"".join(parts)
            parts = []


def send_text(handler, text: str):
    write_frame(handler.wfile, OP_TEXT, text.encode())
