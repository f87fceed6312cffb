"""The Textual explorer: renders what the core computed and dispatches keys; no verdict logic here."""
