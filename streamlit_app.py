"""Attention Lab: the entry point. Page config, navigation and the home page."""

import streamlit as st

st.set_page_config(page_title="Attention Lab", page_icon="🔍", layout="wide")
st.title("Attention Lab")
st.write("Transformer attention from first principles, one matrix at a time.")
