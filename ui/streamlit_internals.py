"""The app's one door to Streamlit's private names: every call the public API cannot make, each in a small function.

Moving to a new Streamlit release is this file and one test run (tests/ui/test_streamlit_internals.py, a test per
function below, run against the installed Streamlit; tests/ui/test_send.py compares a whole chart with
st.vega_lite_chart's). Nothing else in the app imports a private Streamlit module or reads a private attribute
(the same test file greps for it). Each function says what it does, why the public API cannot, and what to check on
an upgrade. Pinned to Streamlit 1.67.

Charts (ui.drawing.send): vega_lite_json, send_vega_lite_chart. The link (ui.state.controls): show_in_address_bar,
seed_from_link. Warming a fresh server (ui.compute.warm): run_page_for_no_one, a_browser_script_running,
runtime_ready, logger.

Public names the app imports from Streamlit's modules, which stay where they are:
- streamlit.delta_generator.DeltaGenerator: the return type Streamlit's own signatures give st.container,
  st.empty and st.columns, the type a container is named by in an annotation (lessons/full_model/page.py);
- streamlit.errors.StreamlitAPIException: the error Streamlit's documented commands say they raise (st.rerun,
  st.logo); ui/frame/page.py catches it where st.page_link finds no page (a page run outside the navigation);
- streamlit.testing.v1 (AppTest) and st.App: documented.
"""

from __future__ import annotations

import asyncio
import json
import time
from urllib.parse import urlencode

import streamlit as st
from streamlit.elements.lib.layout_utils import LayoutConfig
from streamlit.elements.vega_charts import _prepare_vega_lite_spec, _stabilize_vega_json_spec
from streamlit.logger import get_logger
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.VegaLiteChart_pb2 import VegaLiteChart
from streamlit.runtime import Runtime
from streamlit.runtime.app_session import AppSession, AppSessionState
from streamlit.runtime.script_data import ScriptData
from streamlit.runtime.state import SCRIPT_RUN_WITHOUT_ERRORS_KEY
from streamlit.runtime.state.session_state_proxy import get_session_state

# ---- charts --------------------------------------------------------------------------------------------------


def vega_lite_json(spec: dict, stretch: bool) -> str:
    """spec written as JSON exactly as st.vega_lite_chart(spec, width="stretch" if stretch else ...) writes it into
    the element it sends: Streamlit's autosize added, null legend titles patched, Altair's counted view and
    parameter names (view_12, param_3) renamed to stable ones; a `datasets` entry kept as given.

    Why private: st.vega_lite_chart does this and sends the element in one call, at about 0.5 ms a chart of 5 KB
    on every draw; the app writes each chart's design once per process (ui.drawing.send) and must write it as
    Streamlit would, or the browser would see a different chart. No public function returns the JSON.
    Upgrade: streamlit/elements/vega_charts.py, the two calls in VegaChartsMixin._vega_lite_chart
    (`_prepare_vega_lite_spec(spec, use_container_width)`, `_stabilize_vega_json_spec(json.dumps(spec))`)."""
    return _stabilize_vega_json_spec(json.dumps(_prepare_vega_lite_spec(spec, stretch)))


def send_vega_lite_chart(spec_json: str, datasets: dict[str, bytes], width: str, alt: str | None = None) -> None:
    """Send a chart element where the page is (the container of the `with` block it runs in, as any st.* call):
    spec_json (vega_lite_json's, filled in), each dataset (Arrow bytes) under its name, Streamlit's theme, alt as
    the accessible name of a spec without a description of its own, width "stretch" or "content", height the
    content's. The element st.vega_lite_chart(spec with datasets, width=width, alt=alt) sends.

    Why private: st.vega_lite_chart takes a dict and writes its JSON again on every call (vega_lite_json's cost,
    the thing the app avoids); a chart of ready JSON can be sent only as its element, through the container's
    `_enqueue`. A chart that reports clicks (a widget) still goes through st.vega_lite_chart.
    Upgrade: DeltaGenerator._enqueue's signature (delta_type, element_proto, layout_config=...), LayoutConfig's
    fields, and the fields VegaChartsMixin._vega_lite_chart sets on the VegaLiteChart proto."""
    proto = VegaLiteChart()
    proto.spec = spec_json
    proto.theme = "streamlit"
    for name, table in datasets.items():
        dataset = proto.datasets.add()
        dataset.name, dataset.has_name, dataset.data.data = name, True, table
    if alt:
        proto.alt = alt
    st._main._enqueue("vega_lite_chart", proto, layout_config=LayoutConfig(width=width, height="content"))


# ---- the link ------------------------------------------------------------------------------------------------


def show_in_address_bar(key: str, text: str | None) -> None:
    """Make the browser's address bar say `key=text` (or leave `key` out, for None), for a key a widget is bound
    to (bind="query-params"), on any run, the page's first included; nothing is sent when it says so already.

    Why private: st.query_params refuses to set or delete a bound key (StreamlitAPIException, measured by the
    test), and the binding drops a link's value it cannot use without a word, leaving the bare path; the app
    corrects the link (a clamped number, a snapped option) through the object the binding corrects links by.
    Upgrade: streamlit/runtime/state/query_params.py, QueryParams.set_corrected_value(key, value, value_type),
    remove_param, has_param, get_all; SessionState.query_params() as a context manager."""
    with get_session_state().query_params() as qp:
        if text is None:
            if qp.has_param(key):
                qp.remove_param(key)
        elif qp.get_all(key) != [text]:
            qp.set_corrected_value(key, text, "string_value")


def seed_from_link(key: str, text: str) -> None:
    """Make the binding seed the widget `key` from `text`, on this first run, as if the link had said it (the app
    cuts a link's overlong text before the box shows it).

    Why private: the binding seeds a widget from the link as it was when the page opened, and prefers it to a
    value put in st.session_state in the same run; only the link it remembers can change what it seeds.
    Upgrade: QueryParams._initial_query_params (a dict of lists, as parse_qs gives) and
    set_initial_query_params(query_string) in streamlit/runtime/state/query_params.py."""
    with get_session_state().query_params() as qp:
        initial = {k: v for k, v in qp._initial_query_params.items() if k != key}
        qp.set_initial_query_params(urlencode({**initial, key: [text]}, doseq=True))


# ---- warming a fresh server ----------------------------------------------------------------------------------


async def run_page_for_no_one(page: str, timeout_s: float) -> bool:
    """Run the app's script once for `page` (its url path, "" for the default page), as a browser opening a bare
    link would, in a session no browser holds; True when the run ended without an exception within timeout_s.
    What the run draws goes nowhere; its session state goes with the session. Call it on the server's event loop
    (an st.App lifespan).

    Why private: Streamlit runs a script only for a browser's session, and its own health check
    (Runtime.does_script_run_without_error, the model of this function) runs the default page alone.
    Upgrade: that method in streamlit/runtime/runtime.py (how it builds its AppSession: ScriptData, the
    runtime's _main_script_path, _is_hello, _uploaded_file_mgr, _script_cache), AppSession.request_rerun with
    ClientState(page_name=...), SCRIPT_RUN_WITHOUT_ERRORS_KEY."""
    runtime = Runtime.instance()
    session = AppSession(
        script_data=ScriptData(runtime._main_script_path, runtime._is_hello),
        uploaded_file_manager=runtime._uploaded_file_mgr,
        script_cache=runtime._script_cache,
        message_enqueued_callback=None,  # no browser to send to
        user_info={},
    )
    try:
        session.request_rerun(ClientState(page_name=page))
        deadline = time.monotonic() + timeout_s
        while SCRIPT_RUN_WITHOUT_ERRORS_KEY not in session.session_state and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        return bool(session.session_state[SCRIPT_RUN_WITHOUT_ERRORS_KEY]) \
            if SCRIPT_RUN_WITHOUT_ERRORS_KEY in session.session_state else False
    finally:
        session.shutdown()


def a_browser_script_running() -> bool:
    """Whether the script of a session a browser holds is running now (run_page_for_no_one's sessions are none).

    Why private: the public API sees the current session only; the warm-up must let students' runs go first.
    Upgrade: Runtime._session_mgr.list_active_sessions(), ActiveSessionInfo.session, AppSession._state and
    AppSessionState.APP_IS_RUNNING."""
    return any(info.session._state == AppSessionState.APP_IS_RUNNING
               for info in Runtime.instance()._session_mgr.list_active_sessions())


async def runtime_ready() -> tuple[bool, str]:
    """(True, "ok") once the server takes browsers' connections; (False, why not) before and while it stops.

    Why private: Streamlit's own /_stcore/health answers from this; an app's route (GET /api/ready) that adds
    its own condition has no public way to ask the same.
    Upgrade: Runtime.is_ready_for_browser_connection, an awaitable property, in streamlit/runtime/runtime.py."""
    return await Runtime.instance().is_ready_for_browser_connection


def logger(name: str):
    """A logger that writes where Streamlit's own log lines go, at the level `logger.level` sets.

    Why private: a plain logging.getLogger(name) has no handler under `streamlit run`, and its lines (the
    "warmed N pages" one that tests/system/test_warm_start.py reads) are lost.
    Upgrade: streamlit/logger.py, get_logger(name)."""
    return get_logger(name)
