"""Figures of an explanation: interactive plotly (plots) and static matplotlib images (static_figures), from the
same token axes and cell values (cells)."""
