"""The knockout's loss beside its change: no arrow and no colour for a change that rounds to 0, red for a rise
(a higher loss is worse), green for a fall."""

from __future__ import annotations

import pytest
from streamlit.proto.Metric_pb2 import Metric as MetricProto
from streamlit.testing.v1 import AppTest


def _page(loss: float, base: float) -> None:
    import streamlit as st

    from ui.sections.knockout_views import change_metric
    change_metric(st, "Loss", loss, base)


@pytest.mark.parametrize("loss, base, delta, colour, arrow", [
    (2.5, 2.5, "no change", MetricProto.MetricColor.GRAY, MetricProto.MetricDirection.NONE),
    (2.5002, 2.5, "no change", MetricProto.MetricColor.GRAY, MetricProto.MetricDirection.NONE),
    (2.4998, 2.5, "no change", MetricProto.MetricColor.GRAY, MetricProto.MetricDirection.NONE),  # not "-0.000"
    (2.75, 2.5, "+0.250", MetricProto.MetricColor.RED, MetricProto.MetricDirection.UP),
    (2.25, 2.5, "-0.250", MetricProto.MetricColor.GREEN, MetricProto.MetricDirection.DOWN),
    # the change between the numbers as printed: 1.234 -> 1.235 is +0.001, and 1.235 beside 1.235 no change
    (1.2346, 1.2344, "+0.001", MetricProto.MetricColor.RED, MetricProto.MetricDirection.UP),
    (1.2354, 1.2346, "no change", MetricProto.MetricColor.GRAY, MetricProto.MetricDirection.NONE),
])
def test_a_change_is_shown_as_what_it_means(loss, base, delta, colour, arrow):
    at = AppTest.from_function(_page, args=(loss, base)).run()
    assert not at.exception
    (metric,) = at.metric
    assert metric.value == f"{loss:.3f}"
    assert metric.delta == delta
    assert metric.proto.color == colour and metric.proto.direction == arrow
