"""The wire shapes of the scripted model server (tests/kit/modelserver.py): a :class:`Reply`
as an Anthropic message and its SSE events, as OpenAI Responses SSE events, as a chat
completion and its SSE chunks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from tests.kit.modelserver import Reply


class Ids(Protocol):
    """Where the wire ids come from (the server, which maps each tool call's back to its tag)."""

    def wire_id(self, prefix: str, tag: str) -> str: ...

    def serial(self) -> int: ...


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def anthropic_message(server: Ids, model: str, reply: Reply) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    for call in reply.calls:
        wire = server.wire_id("toolu_", call.tag)
        content.append({"type": "tool_use", "id": wire, "name": call.name, "input": call.input})
    t = reply.tokens
    return {
        "id": f"msg_{server.serial()}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if reply.calls else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": t.input,
            "output_tokens": t.output,
            "cache_read_input_tokens": t.cache_read,
            "cache_creation_input_tokens": t.cache_write,
        },
    }


def anthropic_events(message: dict[str, Any]) -> Iterator[bytes]:
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    yield _sse("message_start", {"type": "message_start", "message": start})
    for index, block in enumerate(message["content"]):
        opened: dict[str, Any]
        delta: dict[str, Any]
        if block["type"] == "text":
            opened = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            opened = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield _sse(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": opened},
        )
        yield _sse(
            "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        )
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
    yield _sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": usage["output_tokens"]},
        },
    )
    yield _sse("message_stop", {"type": "message_stop"})


def responses_events(server: Ids, model: str, reply: Reply) -> Iterator[bytes]:
    rid = f"resp_{server.serial()}"
    head = {"id": rid, "object": "response", "model": model}
    yield _sse(
        "response.created",
        {"type": "response.created", "response": {**head, "status": "in_progress"}},
    )
    items: list[dict[str, Any]] = []
    if reply.text:
        items.append(
            {
                "type": "message",
                "role": "assistant",
                "id": f"msg_{server.serial()}",
                "status": "completed",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
            }
        )
    for call in reply.calls:
        wire = server.wire_id("call_", call.tag)
        if isinstance(call.input, str):
            items.append(
                {
                    "type": "custom_tool_call",
                    "id": f"ctc_{wire}",
                    "call_id": wire,
                    "name": call.name,
                    "input": call.input,
                    "status": "completed",
                }
            )
        else:
            items.append(
                {
                    "type": "function_call",
                    "id": f"fc_{wire}",
                    "call_id": wire,
                    "name": call.name,
                    "arguments": json.dumps(call.input),
                    "status": "completed",
                }
            )
    for index, item in enumerate(items):
        yield _sse(
            "response.output_item.done",
            {"type": "response.output_item.done", "output_index": index, "item": item},
        )
    t = reply.tokens
    usage = {
        "input_tokens": t.input + t.cache_read + t.cache_write,
        "input_tokens_details": {
            "cached_tokens": t.cache_read,
            "cache_write_tokens": t.cache_write,
        },
        "output_tokens": t.output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": t.input + t.cache_read + t.cache_write + t.output,
    }
    done = {**head, "status": "completed", "output": items, "usage": usage}
    yield _sse("response.completed", {"type": "response.completed", "response": done})


def chat_completion(server: Ids, model: str, reply: Reply) -> dict[str, Any]:
    t = reply.tokens
    return {
        "id": f"chatcmpl-{server.serial()}",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": reply.text},
            }
        ],
        "usage": {
            "prompt_tokens": t.input + t.cache_read + t.cache_write,
            "completion_tokens": t.output,
            "total_tokens": t.input + t.cache_read + t.cache_write + t.output,
            "prompt_tokens_details": {"cached_tokens": t.cache_read},
        },
    }


def chat_events(completion: dict[str, Any]) -> Iterator[bytes]:
    text = completion["choices"][0]["message"]["content"]
    base = {k: completion[k] for k in ("id", "created", "model")}
    chunk = {**base, "object": "chat.completion.chunk"}
    yield f"data: {json.dumps({**chunk, 'choices': [{'index': 0, 'delta': {'role': 'assistant', 'content': text}, 'finish_reason': None}]})}\n\n".encode()  # noqa: E501
    yield f"data: {json.dumps({**chunk, 'choices': [{'index': 0, 'delta': {}, 'finish_reason': 'stop'}], 'usage': completion['usage']})}\n\n".encode()  # noqa: E501
    yield b"data: [DONE]\n\n"
