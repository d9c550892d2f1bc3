"""Streamlit helpers shared by the pages: settings sidebar, messages, persistence, bounds, long texts, the
explanation view (Inspect, and the drill-downs of Compare, Agreement, the stress test and Many samples)."""
