"""ui.streamlit_internals against the installed Streamlit: a test per function, each failing when the private call
it wraps changes (its signature or what it does), and the check that nothing else in the app reaches Streamlit's
private names. On a Streamlit upgrade: run this file (and tests/ui/test_send.py, every chart design both ways).

The charts' test compares the element the adapter sends with st.vega_lite_chart's; the link's tests read what the
browser's address bar is told (AppTest's query_params after a run: the session's query string); the warm-up's test
starts a real server on a tiny app whose lifespan runs its page for no one (marked `system`: a server)."""

from __future__ import annotations

import ast
import asyncio
import json
import textwrap
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
ADAPTER = "ui/streamlit_internals.py"

# ---- charts --------------------------------------------------------------------------------------------------

LAYERED = {  # two views and a parameter named by Altair's counters, data by name: what the app's designs hold
    "layer": [
        {"name": "view_17", "mark": "rect", "params": [{"name": "param_9", "select": "point", "views": ["view_17"]}],
         "encoding": {"x": {"field": "a", "type": "ordinal"}, "y": {"field": "b", "type": "ordinal"}}},
        {"name": "view_18", "mark": "text", "encoding": {"text": {"field": "a", "type": "ordinal"}}},
    ],
    "data": {"name": "table"},
}


def test_vega_lite_json_writes_what_st_vega_lite_chart_writes_and_keeps_datasets():
    from ui import streamlit_internals

    datasets = {"table": [{"a": 1, "b": 2}]}
    text = streamlit_internals.vega_lite_json({**LAYERED, "datasets": datasets}, stretch=True)
    spec = json.loads(text)
    assert spec["datasets"] == datasets  # kept as given, never renamed inside
    assert spec["autosize"] == {"type": "fit", "contains": "padding"}  # Streamlit's sizing for a stretched layer
    # Altair's counted names renamed to stable ones, the same whatever the counters said
    renamed = json.loads(streamlit_internals.vega_lite_json(json.loads(json.dumps(LAYERED).replace("_17", "_3")
                                                                       .replace("_9", "_44")), stretch=True))
    assert {k: v for k, v in spec.items() if k != "datasets"} == renamed
    assert "view_17" not in text and "param_9" not in text
    assert json.loads(streamlit_internals.vega_lite_json({"mark": "bar", "facet": {}}, stretch=False))["autosize"] \
        == {"type": "pad", "contains": "padding"}


def _charts_both_ways(spec: dict, width: str, alt: str | None) -> None:
    """Draw spec (its numbers in a dataset named "table") through st.vega_lite_chart and through the adapter, and
    keep the two elements sent."""
    import pyarrow as pa
    import streamlit as st
    import streamlit.delta_generator as dg_module

    from ui import streamlit_internals

    sink = pa.BufferOutputStream()
    table = pa.table({"a": [1, 2, 3], "b": [4, 5, 6]})
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    arrow = sink.getvalue().to_pybytes()
    sent, original = [], dg_module._enqueue_message  # what goes to the browser, as the message it is
    dg_module._enqueue_message = lambda msg: (sent.append(msg.SerializeToString()), original(msg))
    try:
        st.vega_lite_chart({**spec, "datasets": {"table": arrow}}, width=width, alt=alt)
        streamlit_internals.send_vega_lite_chart(
            streamlit_internals.vega_lite_json(spec, stretch=width == "stretch"), {"table": arrow}, width, alt)
    finally:
        dg_module._enqueue_message = original
    st.session_state["sent"] = sent


@pytest.mark.parametrize("width, alt", [("stretch", None), ("content", "three bars")])
def test_send_vega_lite_chart_sends_the_element_st_vega_lite_chart_sends(width, alt):
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    at = AppTest.from_function(_charts_both_ways, args=(LAYERED, width, alt), default_timeout=60).run()
    assert not at.exception, [e.message for e in at.exception]
    elements = [ForwardMsg.FromString(raw).delta.new_element for raw in at.session_state["sent"]]
    theirs, ours = [e for e in elements if e.WhichOneof("type") == "vega_lite_chart"]
    assert ours == theirs  # the spec, its dataset, theme, alt, width and height: every field
    assert len(ours.vega_lite_chart.datasets) == 1 and ours.vega_lite_chart.datasets[0].has_name
    assert ours.width_config.WhichOneof("width_spec") == {"stretch": "use_stretch", "content": "use_content"}[width]
    # and it lands where the page is: inside the container of the `with` block around it
    assert [n.type for n in at.main.children.values()] == ["vega_lite_chart", "vega_lite_chart"]


def test_send_vega_lite_chart_draws_inside_the_with_block():
    def script():
        import streamlit as st

        from ui import streamlit_internals

        with st.expander("box"):
            streamlit_internals.send_vega_lite_chart(
                streamlit_internals.vega_lite_json({"mark": "bar", "data": {"name": "t"}}, True), {}, "stretch")
        st.write("after")

    at = AppTest.from_function(script).run()
    assert not at.exception
    assert [e.type for e in at.expander[0].children.values()] == ["vega_lite_chart"]
    assert at.markdown[0].value == "after"


# ---- the link ------------------------------------------------------------------------------------------------


def _bound_slider(correct_to: str | None) -> None:
    """A slider bound to the link (0..10, default 3), and the address bar told to say n=correct_to (or no n)."""
    import streamlit as st

    from ui import streamlit_internals

    st.slider("n", 0, 10, 3, key="n", bind="query-params")
    try:  # the public way, which the adapter exists for lack of
        st.query_params["n"] = "10"
        st.session_state["public"] = "allowed"
    except Exception as error:  # the kind of error is what is measured
        st.session_state["public"] = type(error).__name__
    streamlit_internals.show_in_address_bar("n", correct_to)


def test_show_in_address_bar_corrects_what_the_binding_dropped():
    at = AppTest.from_function(_bound_slider, args=("10",))
    at.query_params["n"] = "99"  # out of range: the binding drops it and the slider shows its default
    at.run()
    assert not at.exception
    assert at.slider[0].value == 3
    assert at.query_params == {"n": "10"}  # the address bar now says the corrected value
    # st.query_params refuses a bound key: when this fails, the public way works and the adapter's call can go
    assert at.session_state["public"] == "StreamlitAPIException"


def test_show_in_address_bar_removes_a_key():
    at = AppTest.from_function(_bound_slider, args=(None,))
    at.query_params["n"] = "7"
    at.query_params["other"] = "kept"
    at.run()
    assert not at.exception and at.slider[0].value == 7
    assert at.query_params == {"other": "kept"}


def _box_seeded_from(text: str) -> None:
    import streamlit as st

    from ui import streamlit_internals

    streamlit_internals.seed_from_link("t", text)
    st.session_state["shown"] = st.text_input("t", "default", key="t", bind="query-params")


def test_seed_from_link_is_what_the_binding_seeds_the_widget_with():
    at = AppTest.from_function(_box_seeded_from, args=("cut",))
    at.query_params["t"] = "a text far too long"
    at.query_params["n"] = "5"
    at.run()
    assert not at.exception
    assert at.session_state["shown"] == "cut" and at.text_input[0].value == "cut"


# ---- warming a fresh server ----------------------------------------------------------------------------------

APP = '''
import contextlib, json, sys, time
from pathlib import Path

sys.path.insert(0, {root!r})
import streamlit as st
from starlette.responses import JSONResponse
from starlette.routing import Route

from ui import streamlit_internals

HERE = Path(__file__).parent
LOG = streamlit_internals.logger("warm_probe")

if __name__ == "__main__":  # a run: say whether a browser's script was running, fail when asked to
    time.sleep(0.5)  # the server marks a session running once its loop has heard that the script started
    with open(HERE / "runs.txt", "a") as runs:
        runs.write(f"{{streamlit_internals.a_browser_script_running()}}\\n")
    if (HERE / "fail").exists():
        raise RuntimeError("asked to fail")
    st.write("ran")
else:
    @contextlib.asynccontextmanager
    async def lifespan(_app):
        ok = await streamlit_internals.run_page_for_no_one("", 60)
        (HERE / "fail").touch()
        failed = await streamlit_internals.run_page_for_no_one("", 60)
        (HERE / "fail").unlink()
        (HERE / "warm.json").write_text(json.dumps([ok, failed]))
        LOG.info("probe warmed")
        yield

    async def probe(_request):
        return JSONResponse(await streamlit_internals.runtime_ready())

    app = st.App(__file__, lifespan=lifespan, routes=[Route("/api/probe", probe)])
'''


@pytest.mark.system
@pytest.mark.timeout(240)
def test_the_warm_up_hooks_run_a_page_for_no_one_on_a_real_server(tmp_path):
    import time
    import urllib.request

    from bench.streamlit_client import Server, Session

    async def a_browser_opens_the_page(url: str):
        session, render = await Session.open(url, "")
        await session.close()
        return render

    (tmp_path / "app.py").write_text(textwrap.dedent(APP.format(root=str(ROOT))))
    with Server(root=tmp_path, script="app.py") as server:
        deadline = time.monotonic() + 120
        while not (tmp_path / "warm.json").exists():
            assert time.monotonic() < deadline and server.proc.poll() is None, server.output()
            time.sleep(0.1)
        # run_page_for_no_one: True for a run that ends well, False for one that raises; the script ran twice
        assert json.loads((tmp_path / "warm.json").read_text()) == [True, False], server.output()
        # a_browser_script_running: a run for no one is no browser's; a browser's own run is
        assert (tmp_path / "runs.txt").read_text().split() == ["False", "False"]
        render = asyncio.run(a_browser_opens_the_page(server.url))
        assert (tmp_path / "runs.txt").read_text().split() == ["False", "False", "True"], render
        # runtime_ready: what Streamlit's own health check answers from
        with urllib.request.urlopen(server.url + "/api/probe", timeout=10) as response:
            assert json.loads(response.read()) == [True, "ok"]
        assert "probe warmed" in server.output()  # logger: its lines reach the server's log


# ---- nothing else reaches Streamlit's private names ----------------------------------------------------------

APP_FOLDERS = ("classroom", "core", "lessons", "ui", "deploy", "tools", "store")
# Names from Streamlit's modules that are public (ui/streamlit_internals.py's docstring says why)
PUBLIC = {"streamlit.testing.v1": None, "streamlit.typing": None, "streamlit.column_config": None,
          "streamlit.components.v1": None, "streamlit.delta_generator": {"DeltaGenerator"},
          "streamlit.errors": {"StreamlitAPIException"}}
NAMEDTUPLE = {"_replace", "_fields", "_asdict", "_make"}  # a namedtuple's public methods
# tools/dump_pages.py dumps other checkouts too, older ones that have no adapter to import: it reads AppTest's
# whole tree (the event container included, which AppTest's public main and sidebar leave out) itself.
ALLOWED = {("tools/dump_pages.py", "_tree")}


def _private_uses(source: str, rel: str) -> list[str]:
    """Each private Streamlit name the module `rel` (its source) reaches, as "line: the code"."""
    if "streamlit" not in source:
        return []
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "streamlit":
            allowed = PUBLIC.get(node.module, set()) if node.module != "streamlit" else None
            names = [a.name for a in node.names]
            if any(n.startswith("_") for n in names) or (allowed is not None and not set(names) <= allowed):
                found.append(f"{node.lineno}: from {node.module} import {', '.join(names)}")
        elif isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names
                      if a.name.startswith("streamlit.") and a.name not in PUBLIC]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__") \
                and node.attr not in NAMEDTUPLE \
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return [f"{rel}:{use}" for use in found if (rel, use.rsplit(".", 1)[-1]) not in ALLOWED]


def test_nothing_but_the_adapter_reaches_streamlit_private_names():
    """A private Streamlit module or attribute used anywhere in the app but ui/streamlit_internals.py (in a file
    that mentions streamlit: a private attribute there is taken for Streamlit's)."""
    files = [ROOT / "streamlit_app.py"] + [p for folder in APP_FOLDERS for p in sorted((ROOT / folder).rglob("*.py"))]
    uses = [use for p in files if (rel := p.relative_to(ROOT).as_posix()) != ADAPTER
            for use in _private_uses(p.read_text(encoding="utf-8"), rel)]
    assert uses == [], "behind ui/streamlit_internals.py, please:\n" + "\n".join(uses)


def test_the_scan_finds_what_it_looks_for():
    """The check above is no check if it finds nothing: each kind of private use it knows, found."""
    sample = ("import streamlit as st\nfrom streamlit.runtime import Runtime\nimport streamlit.proto.X\n"
              "from streamlit.elements.vega_charts import _prepare_vega_lite_spec\n"
              "st._main._enqueue()\nqp._initial_query_params\nfrom streamlit.errors import Other\n"
              "from streamlit.delta_generator import DeltaGenerator\nself._mine, row._replace\n")
    assert set(_private_uses(sample, "ui/x.py")) == {
        "ui/x.py:2: from streamlit.runtime import Runtime", "ui/x.py:3: import streamlit.proto.X",
        "ui/x.py:4: from streamlit.elements.vega_charts import _prepare_vega_lite_spec",
        "ui/x.py:5: st._main._enqueue", "ui/x.py:5: st._main", "ui/x.py:6: qp._initial_query_params",
        "ui/x.py:7: from streamlit.errors import Other"}


def test_the_adapter_imports_nothing_of_the_app():
    """Every layer of ui calls the adapter (it sits under none of them), so it must import no module of the app."""
    tree = ast.parse((ROOT / ADAPTER).read_text(encoding="utf-8"))
    modules = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names} | \
              {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert {m.split(".")[0] for m in modules} - {"__future__", "asyncio", "json", "time", "urllib", "streamlit"} \
        == set()
