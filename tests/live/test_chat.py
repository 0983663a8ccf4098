"""The portal's chat stores its conversations: a real portal process (SQLite, then a real PostgreSQL),
the scripted model, restarts, feedback, failures, crashes and secrets."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import httpx
import psycopg
import pytest

from agent_evals.testing.scripted_openai import ChatRequest, QueueResponder, Reply, ScriptedOpenAIServer
from tests.spoke_prs import prs

from ..conftest import PROJECT_ROOT, clean_env
from .conftest import ChatPortal, store_url

Script = Callable[..., QueueResponder]

SECRET = "sk-proj-Zq8TtVwXy3456789abcdefGHIJ"  # an API key a user pastes into a message


def test_a_conversation_survives_a_restart_and_goes_on(
    chat_portal: ChatPortal, script: Script, scripted_llm: ScriptedOpenAIServer
) -> None:
    script([Reply.tool_calls([("get_spoke", {"name": "crm-dev-neu"})], usage=(50, 5)), Reply.text("It has 3 subnets.", usage=(60, 6))])
    first = chat_portal.chat("How many subnets has crm-dev-neu?")
    assert first.status_code == 200, first.text
    cid = first.json()["conversation_id"]

    chat_portal.restart()
    script(["Yes, northeurope."])
    second = chat_portal.chat("And its region?", cid)
    assert second.status_code == 200, second.text
    sent = scripted_llm.requests[-1].messages
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert sent[1]["content"] == "How many subnets has crm-dev-neu?" and sent[4]["content"] == "It has 3 subnets."

    stored = chat_portal.stored(cid)
    assert (stored["user_id"], stored["status"], stored["turns"], stored["tool_calls"]) == ("alice@contoso.com", "open", 2, 1)
    assert stored["agent"]["name"] == "spoke" and stored["agent"]["model"] == "agent-model"
    assert len(stored["agent"]["instructions_sha256"]) == 64
    record = stored["record"]
    assert record["agent_evals"] == 3 and record["case_id"] == cid and record["user"] == {"kind": "human", "model": None}
    assert [(e["role"], e["content"]) for e in record["transcript"]] == [
        ("user", "How many subnets has crm-dev-neu?"), ("assistant", "It has 3 subnets."),
        ("user", "And its region?"), ("assistant", "Yes, northeurope."),
    ]
    (call,) = record["tool_calls"]
    assert (call["name"], call["outcome"], call["turn"], call["result"]["name"]) == ("get_spoke", "ok", 1, "crm-dev-neu")
    assert record["conversation_end"] == "done" and record["usage"]["agent"]["calls"] == 3
    assert record["usage"]["agent"]["prompt_tokens"] >= 110
    assert [t["turn"] for t in stored["turn_log"]] == [1, 2]
    assert all(t["ended_at"] >= t["started_at"] for t in stored["turn_log"])


def test_a_conversation_belongs_to_its_user(chat_portal: ChatPortal, script: Script) -> None:
    script(["hi alice"])
    cid = chat_portal.chat("hi", user="alice").json()["conversation_id"]
    other = chat_portal.chat("let me in", cid, user="mallory")
    assert other.status_code == 404 and "unknown conversation" in other.json()["error"]
    script(["hi token holder"])
    direct = chat_portal.chat("hi", user=None)  # no X-User-Id: the caller the token authenticated
    assert chat_portal.stored(direct.json()["conversation_id"])["user_id"] == "token"
    assert chat_portal.chat("hi", user="x" * 201).status_code == 400


def test_pull_requests_are_in_the_stored_record(chat_portal: ChatPortal, script: Script) -> None:
    with chat_portal.client() as http:
        config = dict(http.get("/api/spokes/crm-dev-neu").json()["config"], name="crm-dev-weu",
                      location="westeurope", addressSpace=["10.20.32.0/22"])
    args = {"spoke_name": "crm-dev-weu", "config": config, "title": "Add crm-dev-weu", "description": "copy"}
    script([Reply.tool_calls([("create_spoke_pull_request", args)]), "Opened."])
    cid = chat_portal.chat("copy it").json()["conversation_id"]
    record = chat_portal.stored(cid)["record"]
    assert [pr["id"] for pr in prs(record)] == [record["tool_calls"][0]["result"]["id"]]


def test_feedback_is_stored_with_the_conversation(chat_portal: ChatPortal, script: Script) -> None:
    script(["Done."])
    cid = chat_portal.chat("make it so").json()["conversation_id"]
    with chat_portal.client("alice@contoso.com") as http:
        rated = http.post(f"/api/conversations/{cid}/feedback", json={"rating": "down", "comment": "wrong region"})
        assert rated.status_code == 200, rated.text
        assert rated.json()["feedback"]["rating"] == "down"
        assert http.post(f"/api/conversations/{cid}/feedback", json={"rating": "meh"}).status_code == 400
    with chat_portal.client("mallory") as http:
        assert http.post(f"/api/conversations/{cid}/feedback", json={"rating": "up"}).status_code == 404
    script(["More."])
    assert chat_portal.chat("again", cid).status_code == 200  # a later turn keeps the rating
    chat_portal.restart()
    feedback = chat_portal.stored(cid)["feedback"]
    assert (feedback["rating"], feedback["comment"]) == ("down", "wrong region")


def test_a_failed_turn_is_an_error_in_the_record_and_the_message_can_be_sent_again(
    chat_portal: ChatPortal, script: Script, scripted_llm: ScriptedOpenAIServer
) -> None:
    script(["hello", Reply.error(500, "model overloaded")])
    cid = chat_portal.chat("one").json()["conversation_id"]
    failed = chat_portal.chat("two", cid)
    assert failed.status_code == 502 and "model overloaded" in failed.json()["error"]
    stored = chat_portal.stored(cid)
    assert stored["status"] == "error"
    assert (stored["record"]["conversation_end"], stored["record"]["error_kind"]) == ("error", "model")
    script(["better now"])
    assert chat_portal.chat("two again", cid).status_code == 200
    assert [m.get("content") for m in scripted_llm.requests[-1].messages[1:]] == ["one", "hello", "two again"]
    record = chat_portal.stored(cid)["record"]
    assert record["conversation_end"] == "done" and record["turns"] == 2


def test_a_crash_mid_turn_leaves_a_cut_off_conversation_that_can_go_on(
    chat_portal: ChatPortal, scripted_llm: ScriptedOpenAIServer
) -> None:
    asked, release = threading.Event(), threading.Event()

    def hold(request: ChatRequest) -> Reply:
        if request.last_user_message == "slow one":
            asked.set()
            release.wait(60)
        return Reply.text(f"re: {request.last_user_message}")

    scripted_llm.responder = hold
    cid = chat_portal.chat("first").json()["conversation_id"]
    answers: list[httpx.Response | Exception] = []

    def send() -> None:
        try:
            answers.append(chat_portal.chat("slow one", cid))
        except httpx.HTTPError as exc:
            answers.append(exc)

    sender = threading.Thread(target=send)
    sender.start()
    assert asked.wait(60), "the model was never asked"
    assert chat_portal.process is not None and chat_portal.process.pid is not None
    os.kill(chat_portal.process.pid, signal.SIGKILL)  # the portal dies while the agent is answering
    chat_portal.process.stop()
    release.set()
    sender.join(60)
    assert answers and not isinstance(answers[0], httpx.Response)
    chat_portal.start()
    stored = chat_portal.stored(cid)
    assert stored["status"] == "cut_off"
    record = stored["record"]
    assert (record["conversation_end"], record["error_kind"]) == ("error", "cut_off")
    assert record["transcript"][-1] == {"role": "user", "content": "slow one", "turn": 2, "tool_calls": []}
    again = chat_portal.chat("are you there?", cid)
    assert again.status_code == 200
    after = chat_portal.stored(cid)
    assert after["status"] == "open" and [e["content"] for e in after["record"]["transcript"]] == [
        "first", "re: first", "are you there?", "re: are you there?",
    ]


def test_deleting_a_user_s_conversations(chat_portal: ChatPortal, script: Script) -> None:
    script(["a", "b", "c"])
    mine = [chat_portal.chat("x", user="bob").json()["conversation_id"] for _ in range(2)]
    theirs = chat_portal.chat("x", user="carol").json()["conversation_id"]
    with chat_portal.client() as http:
        answer = http.delete("/api/users/bob/conversations")
        assert answer.json() == {"user_id": "bob", "deleted": 2}
        assert all(http.get(f"/api/conversations/{c}").status_code == 404 for c in mine)
        assert http.get(f"/api/conversations/{theirs}").status_code == 200


def test_stored_conversations_need_the_token(chat_portal: ChatPortal, script: Script) -> None:
    script(["ok"])
    cid = chat_portal.chat("x").json()["conversation_id"]
    for method, path in (("GET", "/api/conversations"), ("GET", f"/api/conversations/{cid}"),
                         ("DELETE", "/api/users/alice@contoso.com/conversations")):
        assert httpx.request(method, chat_portal.url + path).status_code == 401


def test_a_secret_in_a_message_never_reaches_the_store(
    chat_portal: ChatPortal, script: Script, scripted_llm: ScriptedOpenAIServer
) -> None:
    script([f"Got it: {SECRET}"])  # the model even repeats it
    answer = chat_portal.chat(f"my key is {SECRET} and the token Bearer {chat_portal.token}")
    assert answer.status_code == 200
    assert SECRET in scripted_llm.requests[-1].messages[-1]["content"]  # the agent got the message as written
    cid = answer.json()["conversation_id"]
    stored = chat_portal.stored(cid)
    text = str(stored)
    assert SECRET not in text and chat_portal.token not in text and "[redacted]" in text
    assert SECRET not in _raw_store(chat_portal) and chat_portal.token not in _raw_store(chat_portal)


def _raw_store(portal: ChatPortal) -> str:
    """Every byte of the store: the SQLite file (and its journal), or the PostgreSQL table."""
    if portal.store_url.startswith("sqlite:///"):
        path = Path(portal.store_url.removeprefix("sqlite:///"))
        with sqlite3.connect(path) as db:
            db.execute("PRAGMA wal_checkpoint(FULL)")
        return "".join(p.read_bytes().decode("latin-1") for p in path.parent.glob(path.name + "*"))
    with psycopg.connect(portal.store_url) as db:
        return str(db.execute("SELECT * FROM conversations").fetchall())


def test_the_default_store_is_a_file_in_the_data_dir_readable_by_its_owner_only(
    tmp_path: Path, script: Script, scripted_llm: ScriptedOpenAIServer
) -> None:
    portal = ChatPortal(tmp_path, "", scripted_llm).start()  # no database URL: the default
    try:
        script(["ok"])
        assert portal.chat("x").status_code == 200
    finally:
        portal.stop()
    path = tmp_path / "data" / "conversations.sqlite3"
    assert path.is_file() and path.stat().st_mode & 0o077 == 0


def test_a_store_that_is_down_answers_one_clear_error_and_loses_nothing(
    tmp_path: Path, script: Script, scripted_llm: ScriptedOpenAIServer, request: pytest.FixtureRequest
) -> None:
    postgres = request.getfixturevalue("postgres")
    portal = ChatPortal(tmp_path, store_url("postgresql", lambda: postgres, tmp_path), scripted_llm).start()
    try:
        script(["kept"])
        cid = portal.chat("first").json()["conversation_id"]
        postgres.stop()
        try:
            script(["never asked"])
            scripted_llm.clear_requests()
            down = portal.chat("second", cid)
            assert down.status_code == 503
            assert down.json()["error"].startswith("the conversation store is unavailable: the conversation store postgresql://")
            assert "the message was not sent to the agent" in down.json()["error"]
            assert not scripted_llm.requests
            with portal.client() as http:
                assert http.get("/api/conversations").status_code == 503
            scoring = subprocess.run([sys.executable, "-m", "agent_evals.cli", "live", "--portal", portal.url],
                                     capture_output=True, text=True, timeout=120, check=False, cwd=PROJECT_ROOT,
                                     env={**clean_env(), "PORTAL_TOKEN": portal.token})
            assert scoring.returncode == 2, scoring.stdout + scoring.stderr
            assert scoring.stdout.startswith(f"live: the portal at {portal.url} answered 503: the conversation store is unavailable")
        finally:
            postgres.start()
        stored = portal.stored(cid)
        assert [e["content"] for e in stored["record"]["transcript"]] == ["first", "kept"]
        script(["back"])
        assert portal.chat("second", cid).status_code == 200
    finally:
        portal.stop()


def test_a_conversation_another_server_answered_is_read_again(
    chat_portal: ChatPortal, script: Script, scripted_llm: ScriptedOpenAIServer
) -> None:
    """The portal keeps the conversations it answered last in memory; the store stays the truth: one
    another replica wrote to since is read again."""
    script(["first answer"])
    cid = chat_portal.chat("first").json()["conversation_id"]
    marker = [{"role": "user", "content": "asked elsewhere"}, {"role": "assistant", "content": "answered elsewhere"}]
    sql = "UPDATE conversations SET history = ?, updated_at = updated_at + 1 WHERE id = ?"
    params = (json.dumps([{"role": "user", "content": "first"}, {"role": "assistant", "content": "first answer"}, *marker]), cid)
    if chat_portal.store_url.startswith("sqlite:///"):
        with sqlite3.connect(chat_portal.store_url.removeprefix("sqlite:///")) as db:
            db.execute(sql, params)
    else:
        with psycopg.connect(chat_portal.store_url) as db:
            db.execute(sql.replace("?", "%s"), params)
    script(["second answer"])
    assert chat_portal.chat("second", cid).status_code == 200
    assert [m.get("content") for m in scripted_llm.requests[-1].messages[1:]] == [
        "first", "first answer", "asked elsewhere", "answered elsewhere", "second",
    ]
