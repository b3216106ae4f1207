"""bench/streamlit_client.py without a server: what it reads from the elements a run sends, and what it sends
back when a phone fills a form, as Streamlit's frontend does.

A fake stream stands in for the server: it keeps every BackMsg the session sends and answers each rerun with the
ForwardMsgs a test gives it. The whole exchange with a real server is tests/system/test_class_mode.py's.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.NumberInput_pb2 import NumberInput

from bench.streamlit_client import FINISHED, NumberInputInfo, RadioInfo, Session

FORM = "class_answer_7"
FRAGMENT = "f00d"


def started(fragment_ids: tuple[str, ...] = ()) -> ForwardMsg:
    msg = ForwardMsg()
    msg.new_session.page_script_hash = "page"
    msg.metadata.run.fragment_ids.extend(fragment_ids)
    return msg


def finished(status=FINISHED.FINISHED_SUCCESSFULLY) -> ForwardMsg:
    msg = ForwardMsg()
    msg.script_finished = status
    return msg


def element(fragment_id: str = "", **kind) -> ForwardMsg:
    """A new element: element(markdown={"body": "hi"}) or element(radio={...})."""
    msg = ForwardMsg()
    msg.delta.fragment_id = fragment_id
    (name, fields), = kind.items()
    getattr(msg.delta.new_element, name).MergeFrom(type(getattr(msg.delta.new_element, name))(**fields))
    return msg


def block() -> ForwardMsg:
    """A layout block (here a row of columns) added to the page."""
    msg = ForwardMsg()
    msg.delta.add_block.horizontal.SetInParent()
    return msg


def answer_form(fragment_id: str = FRAGMENT) -> list[ForwardMsg]:
    """What a student's page draws for a choice question: a radio and a Send button in a form, in a fragment."""
    return [element(fragment_id, markdown={"body": "#### Question 1\n\nWhich one?"}),
            element(fragment_id, radio={"id": "$$ID-ab-class_pick_7", "label": "Your answer", "form_id": FORM,
                                        "options": ["A. one", "B. two"]}),
            element(fragment_id, button={"id": f"$$ID-cd-FormSubmitter:{FORM}-Send", "label": "Send",
                                         "form_id": FORM, "is_form_submitter": True})]


class FakeStream:
    """The server's side of the websocket: each rerun_script is kept, and answered with the next run given."""

    def __init__(self, session: Session, runs: list[list[ForwardMsg]]):
        self.session, self.runs, self.sent = session, runs, []

    async def send(self, raw: bytes) -> None:
        self.sent.append(BackMsg.FromString(raw).rerun_script)
        for msg in self.runs.pop(0):
            asyncio.get_running_loop().call_soon(self.session._handle, msg.SerializeToString())


async def connected(runs: list[list[ForwardMsg]]) -> tuple[Session, FakeStream]:
    session = Session("http://127.0.0.1:1", "class", "code=K7M4QX")
    session._ws = stream = FakeStream(session, runs)
    session._reader = asyncio.create_task(asyncio.Event().wait())  # a reader that is still running
    return session, stream


def sent_values(rerun) -> dict[str, object]:
    return {w.id: getattr(w, w.WhichOneof("value")) for w in rerun.widget_states.widgets}


def test_a_form_sends_its_values_only_with_its_submit_button_and_in_its_fragment():
    async def go():
        session, stream = await connected([
            [started(), *answer_form(), finished()],
            [started((FRAGMENT,)), *answer_form(), finished(FINISHED.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)],
            [started((FRAGMENT,)), element(FRAGMENT, toast={"body": "Answer sent."}),
             finished(FINISHED.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)]])
        first = await session.rerun()
        radio = session.fields["class_pick_7"]
        assert isinstance(radio, RadioInfo) and radio.options == ("A. one", "B. two") and radio.value is None
        assert radio.form_id == FORM and radio.fragment_id == FRAGMENT and first.fields["class_pick_7"] == radio
        assert await session.fill(radio, "B. two") is None  # held in the browser: nothing sent
        assert len(stream.sent) == 1
        await session.rerun_fragment(FRAGMENT)  # the fragment's timer meanwhile: the held value stays at home
        assert sent_values(stream.sent[1]) == {}
        sent = await session.press("Send")
        rerun = stream.sent[2]
        assert rerun.fragment_id == FRAGMENT and not rerun.is_auto_rerun
        assert sent_values(rerun) == {radio.id: "B. two", session.buttons["Send"].id: True}
        assert sent.toasts == ["Answer sent."] and "Answer sent." in sent.text
        return session

    session = asyncio.run(go())
    assert not session.held  # sent, and kept as the radio's value for the runs after


def test_a_run_reads_text_alerts_metrics_and_charts_and_a_rerun_replaces_what_the_first_run_drew():
    spec = {"title": {"text": "The room: 3 answers, 2 right"}, "layer": []}

    async def go():
        session, _ = await connected([[
            started(), element(text_input={"id": "$$ID-ef-None", "label": "Nickname (optional)", "max_chars": 24}),
            finished(FINISHED.FINISHED_EARLY_FOR_RERUN),
            started(), element(heading={"body": "Class"}), element(markdown={"body": "### Question 1"}),
            element(markdown={"body": "The reveal is next.", "element_type": 2}),  # a caption
            element(alert={"body": "Joined.", "format": 4}),
            element(metric={"label": "Answers so far", "body": "3 of 4"}),
            element(vega_lite_chart={"spec": json.dumps(spec)}), block(), finished()]])
        return session, await session.rerun()

    session, render = asyncio.run(go())
    assert render.markdown == ["### Question 1"] and render.captions == ["The reveal is next."]
    assert render.alerts == ["Joined."] and render.metrics == {"Answers so far": "3 of 4"}
    assert render.charts == [spec] and render.title == "Class"
    assert render.text.splitlines() == ["Class", "### Question 1", "The reveal is next.", "Joined.",
                                        "Answers so far: 3 of 4"]
    assert session.fields == {}  # the join form of the run cut short is not on the page any more
    assert render.elements == 7  # but it was sent
    assert render.blocks == 1


def test_inputs_send_what_the_browser_sends_and_refuse_what_it_would_not_take():
    whole = NumberInputInfo("n", "", "seq_len", integer=True, min=1, max=32, value=16)
    assert whole.state(4).WhichOneof("value") == "int_value"
    real = NumberInputInfo.from_proto(NumberInput(id="x", label="d", data_type=NumberInput.DataType.FLOAT, value=0.5))
    assert real.value == 0.5 and real.min is None and real.state(0.25).double_value == 0.25
    with pytest.raises(ValueError):
        whole.state(33)
    with pytest.raises(ValueError):
        RadioInfo("r", "", "Your answer", ("A. one",), None).state("B. two")
    level = RadioInfo("l", "level", "Level", ("simple", "technical"), "simple", bound=True)
    session = Session("http://127.0.0.1:1", query="seed=3")
    with pytest.raises(ConnectionError):  # nothing is served there: the rerun is not sent
        asyncio.run(session.fill(level, "technical"))
    assert session.query == "seed=3&level=technical"  # a bound input is written into the address bar first
