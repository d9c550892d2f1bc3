"""Inspect: one candidate/reference pair, explained token by token. (Placeholder until the page is built.)"""

import streamlit as st

st.title("Inspect a pair")
