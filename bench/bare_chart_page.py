"""The yardstick of bench/browser_moves.py: the least a slider move that redraws a chart can cost in a browser.

One slider and one 7x7 heatmap whose values follow it, in a live part (an st.fragment, as every lesson's controls
are). Served with the project's own .streamlit/config.toml, on the same Python, in the same browser and the same
run as the lessons, so a lesson's move divided by this one's says how many bare moves it is worth, on any machine
and whatever else the machine is doing. (bench/bare_page.py, the server-side yardstick, draws no chart: its
move costs a browser almost nothing.)
"""

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

SIZE = 7


def body() -> None:
    seed = st.slider("Random seed", 0, 999, 0, key="seed")
    values = np.random.default_rng(seed).random((SIZE, SIZE))
    rows, cols = np.indices(values.shape)
    data = pd.DataFrame({"row": rows.ravel(), "col": cols.ravel(), "value": values.ravel()})
    heatmap = alt.Chart(data).mark_rect().encode(
        x=alt.X("col:O", title=None), y=alt.Y("row:O", title=None),
        color=alt.Color("value:Q", scale=alt.Scale(domain=[0, 1])), tooltip=["row", "col", "value"],
    ).properties(title=f"seed {seed}", width=280, height=280)
    st.altair_chart(heatmap)


st.title("A bare page")  # outside the live part: the move leaves it; the browser waits for a page's title
st.fragment(body)()
