"""The yardstick of bench/budget.py: the least a slider move can cost on this server.

One slider in a live part (an st.fragment, as every lesson's controls are), and its value written under it.
Served with the project's own .streamlit/config.toml, on the same Python, in the same run as the lessons,
so a lesson's cost divided by this one's says how many bare moves a move of that lesson is worth, on any
machine and whatever else the machine is doing.
"""

import streamlit as st


def body() -> None:
    value = st.slider("Random seed", 0, 999, 0, key="seed")
    st.markdown(f"The seed is **{value}**.")


st.fragment(body)()
