"""The host's reading of the runner's status pipe and the control pipe: whole lines only."""

from __future__ import annotations

from programs.sandbox.process import _control_messages, _status_messages


def test_status_messages_keep_a_partial_line_for_the_next_read():
    buffer = bytearray(b'{"event": "warm"}\n{"event": "rea')
    assert _status_messages(buffer) == [{"event": "warm"}]
    assert bytes(buffer) == b'{"event": "rea'
    buffer += b'dy"}\n'
    assert _status_messages(buffer) == [{"event": "ready"}]
    assert buffer == bytearray()


def test_status_messages_skip_junk_the_code_wrote_to_the_channel():
    buffer = bytearray(b'not json\n{"event": "done", "ok": true}\n')
    assert _status_messages(buffer) == [{"event": "done", "ok": True}]


def test_control_messages_are_stripped_text_lines():
    buffer = bytearray(b"run 2.5 \ncancel\nru")
    assert _control_messages(buffer) == ["run 2.5", "cancel"]
    assert bytes(buffer) == b"ru"
