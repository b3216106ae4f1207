"""Streamlit and Altair glue shared by the pages."""
