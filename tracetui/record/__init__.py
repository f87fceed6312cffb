"""Your own agent, recorded and re-run: the local endpoint it talks to, and its lanes read from the wire.

``tracetui record -- COMMAND`` runs the user's agent against a recording proxy on 127.0.0.1 (the
SDKs read ``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``, ``GOOGLE_GEMINI_BASE_URL``); ``replay`` and
``explain`` re-run the same command against a server that plays the recording back, with edits.
Below ``replay`` (which uses it), above ``loop``; never imports the UI.
"""
