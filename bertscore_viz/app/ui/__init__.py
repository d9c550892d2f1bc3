"""The only Streamlit-aware helpers: settings sidebar, caching, messages. The engine never imports this."""
