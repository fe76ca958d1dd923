"""Appending serialised messages to a rosbags MCAP bag writer's open chunk in one step.

rosbags' `Writer.write` checks the connection against a list, and its MCAP storage builds every Message
record field by field in a fresh buffer: ~6 us a message, as much as the rest of recording together. The
Message record itself is fixed (MCAP spec: opcode 0x05, uint64 length, uint16 channel id, uint32 sequence,
uint64 log time, uint64 publish time, data; rosbags writes sequence 0 and both times the bag timestamp), so
`ChunkAppender.write` packs its header with one struct call and does the same bookkeeping rosbags does
(message counts and time bounds of the bag, the storage and the open chunk, the chunk's message index, the
chunk size limit) on the writer's own state. The result is byte for byte what `Writer.write` produces
(test_runtime_recording.py compares whole bags written both ways).

That bookkeeping lives in rosbags' writer objects, not in a public interface: `ChunkAppender.attach` returns
None (and the recorder keeps calling `Writer.write`) unless the writer has exactly the state this module
knows, i.e. an open MCAP storage without per-message compression, as in rosbags 0.11.
"""
from __future__ import annotations

import struct
from typing import Any

from rosbags.rosbag2 import Writer

MESSAGE_OPCODE = 0x05
_MESSAGE_HEADER = struct.Struct("<BQHIQQ")    # opcode, record length, channel id, sequence, log time, publish time
_MESSAGE_FIELDS = _MESSAGE_HEADER.size - 9    # bytes of the record after opcode and length, before the data
CHUNK_LIMIT = 2 ** 20                         # rosbags closes a chunk once it holds more than this (bytes)

_WRITER_STATE = ("counts", "min_timestamp", "max_timestamp", "compression_mode", "connections", "storage")
_STORAGE_STATE = ("chunk", "channel_stats", "message_start_time", "message_end_time", "close_chunk")
_CHUNK_STATE = ("bio", "msgs", "message_start_time", "message_end_time")


class ChunkAppender:
    """`write(connection, timestamp, data)` with the effect of `Writer.write`, for a writer attach() accepted."""

    def __init__(self, writer: Writer):
        self.writer = writer
        self.storage = writer.storage

    @classmethod
    def attach(cls, writer: Writer) -> ChunkAppender | None:
        storage = getattr(writer, "storage", None)
        if storage is None or type(storage).__name__ != "McapWriter":
            return None
        if not all(hasattr(writer, name) for name in _WRITER_STATE) or \
                not all(hasattr(storage, name) for name in _STORAGE_STATE) or \
                not all(hasattr(storage.chunk, name) for name in _CHUNK_STATE):
            return None
        if getattr(writer.compression_mode, "name", "MESSAGE") == "MESSAGE":   # compresses each message
            return None
        return cls(writer)

    def write(self, connection: Any, timestamp: int, data: bytes) -> None:
        writer, storage = self.writer, self.storage
        cid = connection.id
        writer.counts[cid] += 1
        if timestamp < writer.min_timestamp:
            writer.min_timestamp = timestamp
        if timestamp > writer.max_timestamp:
            writer.max_timestamp = timestamp
        if timestamp < storage.message_start_time:
            storage.message_start_time = timestamp
        if timestamp > storage.message_end_time:
            storage.message_end_time = timestamp
        storage.channel_stats[cid] += 1
        chunk = storage.chunk
        if timestamp < chunk.message_start_time:
            chunk.message_start_time = timestamp
        if timestamp > chunk.message_end_time:
            chunk.message_end_time = timestamp
        bio = chunk.bio
        chunk.msgs[cid].append((timestamp, bio.tell()))
        bio.write(_MESSAGE_HEADER.pack(MESSAGE_OPCODE, _MESSAGE_FIELDS + len(data), cid, 0, timestamp, timestamp))
        bio.write(data)
        if bio.tell() > CHUNK_LIMIT:
            storage.close_chunk()
