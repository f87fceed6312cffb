"""tracetui: find where an LLM tool-calling loop went wrong."""

__version__ = "0.1.0"
